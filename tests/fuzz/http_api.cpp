// The HTTP API's request path as the server runs it, without sockets: Api::handle (daemon/api) parses the target,
// the query string and the JSON body, routes and answers from a real SQLite store. The input is
//   <method byte><target>\n<body>
// and every response must be JSON with a status the API documents.
//
// Each input starts from the same copy of a seeded database (one tree, one finished bisection whose stored subject
// is Latin-1), so a crash replays from its input alone.
#include "daemon/api/api.hpp"
#include "daemon/config/stored_jobs.hpp"
#include "fakes/fake_repo.hpp"
#include "fuzz_support.hpp"
#include "storage/store.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

namespace {

namespace fs = std::filesystem;
namespace api = bisectd::daemon::api;
using namespace bisectd;
using bisectd::fuzz::check;

constexpr const char* k_token = "fuzz-token";

// Every tree is the same small history: a line of commits c0..c5 on `master`.
class FuzzTrees final : public daemon::TreeRepos {
public:
  explicit FuzzTrees(fs::path root) : m_root(std::move(root)) {
    m_repo.set_branch("master", m_repo.line("c", 6).back());
  }
  Status mirror(const std::string&, const std::string&) override { return {}; }
  Result<std::map<std::string, std::string>> fetch(const std::string&) override { return m_repo.branches(); }
  Status with_repo(const std::string&, const std::function<Status(vcs::Repo&)>& action) override {
    return action(m_repo);
  }
  std::mutex& worktree_lock(const std::string&) override { return m_lock; }
  [[nodiscard]] fs::path mirror_dir(const std::string& name) const override { return m_root / "mirrors" / name; }
  [[nodiscard]] fs::path worktree_dir(const std::string& name) const override { return m_root / "worktrees" / name; }
  test::FakeRepo& repo() { return m_repo; }

private:
  fs::path m_root;
  test::FakeRepo m_repo;
  std::mutex m_lock;
};

class OneMachine final : public daemon::LabView {
public:
  [[nodiscard]] std::vector<daemon::MachineInfo> machines() const override {
    return {{.name = "local", .group = "local", .backend = "local", .description = "this host"}};
  }
};

// Opens the bisection as the driver would record it, after the same ref checks; runs nothing.
class Starter final : public daemon::BisectionStarter {
public:
  Starter(FuzzTrees& trees, storage::BisectionStore*& store) : m_trees(trees), m_store(store) {}
  Result<std::int64_t> start(const daemon::BisectionStart& s) override {
    BISECTD_TRY_ASSIGN(auto good, m_trees.repo().resolve(s.good));
    BISECTD_TRY_ASSIGN(auto bad, m_trees.repo().resolve(s.bad));
    BISECTD_TRY_ASSIGN(auto ancestor, m_trees.repo().is_ancestor(good, bad));
    if (!ancestor) {
      return make_error(ErrorCode::invalid_input, "good is not an ancestor of bad");
    }
    storage::BisectionRow row;
    row.tree = s.tree;
    row.branch = s.branch;
    row.job = s.job;
    row.metric = s.metric;
    row.good = row.range_good = good;
    row.bad = row.range_bad = bad;
    row.origin = s.origin;
    return m_store->add_bisection(row);
  }

private:
  FuzzTrees& m_trees;
  storage::BisectionStore*& m_store;
};

struct World {
  fs::path dir;
  fs::path seed_db, db;
  std::unique_ptr<FuzzTrees> trees;
  OneMachine lab;
  storage::BisectionStore* bisections = nullptr;
  std::unique_ptr<Starter> starter;
};

World& world() {
  static World w = [] {
    World made;
    auto base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    made.dir = base / ("bisectd-fuzz-api-" + std::to_string(::getpid()));
    fs::create_directories(made.dir);
    made.seed_db = made.dir / "seed.db";
    made.db = made.dir / "bisectd.db";
    made.trees = std::make_unique<FuzzTrees>(made.dir);
    made.starter = std::make_unique<Starter>(*made.trees, made.bisections);
    return made;
  }();
  return w;
}

// Handles one request against the store in `world().db`.
api::HttpResponse handle(storage::Store& store, const api::HttpRequest& request) {
  auto& w = world();
  w.bisections = &store;
  daemon::config::StoredJobs jobs(store, w.dir / "configs");
  api::ApiContext context{.trees = store,
                          .queue = store,
                          .samples = store,
                          .bisections = store,
                          .detections = store,
                          .outbox = store,
                          .repos = *w.trees,
                          .jobs = jobs,
                          .lab = w.lab,
                          .starter = *w.starter,
                          .wake = [] {},
                          .configs_dir = w.dir / "configs",
                          .poll_interval = std::chrono::seconds(60),
                          .data_dir = w.dir,
                          .started_at = 0,
                          .release_machine = [](const std::string&) -> Result<bool> { return false; }};
  api::Api server(std::move(context), k_token);
  return server.handle(request);
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The seed database: a tree with a job, a bisection, and its report with a Latin-1 subject (bytes a commit can
// carry, which every JSON answer must still encode).
void seed() {
  auto& w = world();
  auto store = storage::Store::open(w.seed_db);
  check(store.has_value(), "cannot open the seed database");
  auto job = read_all(BISECTD_SOURCE_DIR "/configs/jobs/demo-throughput.yaml");
  auto tree = nlohmann::json{{"name", "linux"},  {"url", "https://example.org/linux.git"},
                             {"branches", {"master"}}, {"job_yaml", job},
                             {"notify", {"perf@example.org"}}};
  auto added = handle(**store, {"POST", "/api/v1/trees", tree.dump(), std::string("Bearer ") + k_token});
  check(added.status == 201 || added.status == 200, "cannot add the seed tree");
  auto bisection = nlohmann::json{{"tree", "linux"}, {"branch", "master"}, {"good", test::FakeRepo::sha_of("c0")},
                                  {"bad", test::FakeRepo::sha_of("c5")}, {"job", "demo-throughput"}};
  auto opened = handle(**store, {"POST", "/api/v1/bisections", bisection.dump(), std::string("Bearer ") + k_token});
  check(opened.status == 201 || opened.status == 200, "cannot open the seed bisection");
  auto id = nlohmann::json::parse(opened.body, nullptr, false).value("id", std::int64_t{1});
  auto row = (*store)->bisection(id);
  check(row && row->has_value(), "the seed bisection is not stored");
  auto finished = **row;
  finished.state = storage::BisectionState::found;
  finished.culprit = test::FakeRepo::sha_of("c3");
  storage::ReportRow report{.bisection_id = id,
                            .subject = "[linux] r\xe9gression: bench.ops_per_sec -20%",
                            .sender = "bisectd <bisectd@localhost>",
                            .to = {"Jos\xe9 <jose@example.org>"},
                            .message_id = "<1.fuzz@bisectd>",
                            .body = "caf\xe9\n",
                            .text = "caf\xe9\n"};
  check((*store)->finish_bisection(finished, report).has_value(), "cannot store the seed report");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  seed();
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(world().dir, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  static const std::string k_methods[] = {"GET", "POST", "DELETE", "PUT"};
  api::HttpRequest request;
  request.method = k_methods[data[0] & 3];
  // Bit 2: a wrong token, so the 401 path is fuzzed too.
  request.authorization = (data[0] & 4) != 0 ? "Bearer wrong" : std::string("Bearer ") + k_token;
  auto rest = bisectd::fuzz::text(data + 1, size - 1);
  auto newline = rest.find('\n');
  request.target = rest.substr(0, newline);
  request.body = newline == std::string::npos ? "" : rest.substr(newline + 1);

  auto& w = world();
  // libFuzzer's timeout alarm (SIGALRM every second) can interrupt the copy's system calls: copy again, bounded.
  for (int attempt = 1;; ++attempt) {
    std::error_code error;
    fs::copy_file(w.seed_db, w.db, fs::copy_options::overwrite_existing, error);
    if (!error) {
      break;
    }
    check(error == std::errc::interrupted && attempt < 100, "cannot copy the seed database");
  }
  auto store = storage::Store::open(w.db);
  check(store.has_value(), "cannot open the copy of the seed database");
  auto response = handle(**store, request);

  static const std::set<int> k_statuses{200, 201, 202, 204, 400, 401, 403, 404, 409, 413, 500};
  check(k_statuses.contains(response.status), "a status the API does not document");
  check(response.status != 500, "a 500: an input the API does not handle");
  auto body = nlohmann::json::parse(response.body, nullptr, false);
  check(!body.is_discarded(), "a response body that is not JSON");
  return 0;
}
