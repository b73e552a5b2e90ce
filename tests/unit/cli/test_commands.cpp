// bisectctl commands end to end against fake_bisectd.py (canned replies, logged requests).
#include "base/fs.hpp"
#include "cli/cmd_show.hpp"
#include "cli/cmd_wait.hpp"
#include "cli/format.hpp"
#include "cli/interrupt.hpp"
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

using bisectd::cli::test::FakeServer;
using bisectd::cli::test::run_cli;
using bisectd::cli::test::temp_dir;

namespace bisectd::cli::test {
FakeServer& shared_server();
}
using bisectd::cli::test::shared_server;

namespace {

std::filesystem::path token_file() {
  static std::filesystem::path path = [] {
    auto file = temp_dir("cli-token-") / "token";
    REQUIRE(bisectd::base::write_file_atomic(file, "test-token\n"));
    return file;
  }();
  return path;
}

} // namespace

TEST_CASE("bisectctl tree add sends the job file and absolute path", "[cli][commands]") {
  FakeServer& server = shared_server();
  auto dir = temp_dir("cli-job-");
  REQUIRE(bisectd::base::write_file_atomic(dir / "job.yaml", "name: demo-throughput\n"));
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  auto result = run_cli({"--server", server.url(), "--token-file", token_file().string(), "tree", "add", "demo",
                         "/srv/git/demo", "--branch", "master", "--branch", "next", "--job", "job.yaml", "--notify",
                         "a@example.org", "--poll-interval", "120"});
  std::filesystem::current_path(cwd);
  CHECK(result.code == 0);
  CHECK(result.out == "added tree demo (job demo-throughput, branches master, heads master=0123456789)\n");
  auto request = server.requests().back();
  CHECK(request["method"] == "POST");
  CHECK(request["path"] == "/api/v1/trees");
  CHECK(request["authorization"] == "Bearer test-token");
  auto body = request["body"];
  CHECK(body["name"] == "demo");
  CHECK(body["url"] == "/srv/git/demo");
  CHECK(body["branches"] == nlohmann::json{"master", "next"});
  CHECK(body["job_yaml"] == "name: demo-throughput\n");
  CHECK(body["job_path"] == (dir / "job.yaml").string());
  CHECK(body["notify"] == nlohmann::json{"a@example.org"});
  CHECK(body["poll_interval_s"] == 120);
}

TEST_CASE("bisectctl writes without a token get the server's 401 message", "[cli][commands]") {
  auto result = run_cli({"--server", shared_server().url(), "tree", "remove", "demo"});
  CHECK(result.code == 1);
  CHECK(result.err ==
        "bisectctl: error: missing or wrong token (no token given: use --token-file or BISECTD_TOKEN_FILE)\n");
  auto ok =
    run_cli({"--server", shared_server().url(), "--token-file", token_file().string(), "tree", "remove", "demo"});
  CHECK(ok.code == 0);
  CHECK(ok.out == "removed tree demo\n");
}

TEST_CASE("bisectctl bisect start prints just the id", "[cli][commands]") {
  FakeServer& server = shared_server();
  auto result = run_cli({"bisect", "start", "--tree", "demo", "--good", "v1.0", "--bad", "HEAD~2", "--job", "j1",
                         "--server", server.url(), "--token-file", token_file().string()});
  CHECK(result.code == 0);
  CHECK(result.out == "7\n");
  CHECK(server.requests().back()["body"] ==
        nlohmann::json{{"tree", "demo"}, {"good", "v1.0"}, {"bad", "HEAD~2"}, {"job", "j1"}});
}

TEST_CASE("bisectctl bisections prints the table and passes filters", "[cli][commands]") {
  FakeServer& server = shared_server();
  auto result = run_cli({"--server", server.url(), "bisections", "--tree", "demo", "--state", "found"});
  CHECK(result.code == 0);
  CHECK(result.out.rfind("ID  TREE  STATE    GOOD        BAD         CULPRIT         P  RUNS  BUILDS  AGE\n", 0) == 0);
  CHECK(result.out.find(" 3  demo  found    0000000000  4444444444  89abcdef01  0.997    24       9") !=
        std::string::npos);
  CHECK(result.out.find(" 4  demo  running  v1.0        fedcba9876  -               -     6       2") !=
        std::string::npos);
  CHECK(server.requests().back()["query"] == "tree=demo&state=found");
}

TEST_CASE("bisectctl show and --json", "[cli][commands]") {
  FakeServer& server = shared_server();
  auto human = run_cli({"--server", server.url(), "show", "3"});
  CHECK(human.code == 0);
  CHECK(human.out.find("culprit     89abcdef0123456789abcdef0123456789abcdef sched: slow path\n") != std::string::npos);
  CHECK(human.out.find("P(culprit)  0.997\n") != std::string::npos);
  CHECK(human.out.find("shift       -15.2% (95% interval -17.1% .. -13.1%)\n") != std::string::npos);
  CHECK(human.out.find("5  89abcdef01  bad       2  849.25   ±0.1%  sched: slow path\n") != std::string::npos);
  CHECK(human.out.find("could be any of") == std::string::npos); // a single-commit credible set

  auto json = run_cli({"--server", server.url(), "show", "3", "--json"});
  CHECK(json.code == 0);
  auto object = nlohmann::json::parse(json.out);
  for (const char* key : {"id", "state", "culprit", "runs", "builds", "p_culprit"}) {
    CHECK(object.contains(key));
  }
  auto before = run_cli({"--json", "--server", server.url(), "show", "3"}); // --json before the command
  CHECK(before.code == 0);
  CHECK(before.out == json.out);

  auto missing = run_cli({"--server", server.url(), "show", "99"});
  CHECK(missing.code == 1);
  CHECK(missing.err == "bisectctl: error: bisection 99: not found\n");
}

TEST_CASE("bisectctl report prints the mail text exactly", "[cli][commands]") {
  auto result = run_cli({"--server", shared_server().url(), "report", "3"});
  CHECK(result.code == 0);
  CHECK(result.out == "Subject: [demo:master] 89abcdef01: bench.ops_per_sec -15.2% regression\r\n\r\nGreeting,\n\n"
                      "no trailing newline here");
  auto json = run_cli({"--server", shared_server().url(), "report", "3", "--json"});
  CHECK(nlohmann::json::parse(json.out)["sent"] == true);
}

TEST_CASE("bisectctl status, machines, results, noise", "[cli][commands]") {
  const std::string url = shared_server().url();
  auto status = run_cli({"--server", url, "status"});
  CHECK(status.code == 0);
  CHECK(status.out.rfind("bisectd 0.1.0, up 1m15s, data dir /var/lib/bisectd\n", 0) == 0);
  CHECK(status.out.find("queue:      queued 1, building 0, running 1, done 20, failed 0\n") != std::string::npos);
  CHECK(status.out.find("bisections: running 1, found 2, not_found 0, failed 0\n") != std::string::npos);
  CHECK(status.out.find("local0  local  local    busy   89abcdef01  4 threads laptop") != std::string::npos);

  auto machines = run_cli({"--server", url, "machines", "--json"});
  CHECK(nlohmann::json::parse(machines.out)["machines"].size() == 1);

  auto results = run_cli({"--server", url, "results", "0123456", "--tree", "demo"});
  CHECK(results.code == 0);
  CHECK(results.out.find("bench.latency_us  bench.ops_per_sec") != std::string::npos);
  CHECK(results.out.find("1002") != std::string::npos);
  CHECK(shared_server().requests().back()["query"] == "tree=demo");

  auto noise = run_cli({"--server", url, "noise", "--tree", "demo", "--job", "demo-throughput"});
  CHECK(noise.code == 0);
  CHECK(noise.out.find("bench.ops_per_sec       30    90      1.23%          0.5%  no            yes         "
                       "              4\n") != std::string::npos);
  CHECK(shared_server().requests().back()["query"] == "tree=demo&job=demo-throughput");
  auto tree_job = run_cli({"--server", url, "noise", "--tree", "demo"}); // the daemon takes the tree's job
  CHECK(tree_job.code == 0);
  CHECK(shared_server().requests().back()["query"] == "tree=demo");
}

TEST_CASE("bisectctl wait follows a bisection to its end", "[cli][commands]") {
  const std::string url = shared_server().url();
  auto found = run_cli({"--server", url, "wait", "5", "--interval", "0.05"});
  CHECK(found.code == 0);
  CHECK(found.out == "found 89abcdef0123456789abcdef0123456789abcdef sched: slow path (P 0.995)\n");
  CHECK(
    found.err.find("bisection 5: searching (building b012345678, 1 queued); 3 runs, 1 builds, 1 tested, P 0.200\n") !=
    std::string::npos);
  CHECK(found.err.find("bisection 5: found; 9 runs, 3 builds, 3 tested, P 0.995\n") != std::string::npos);

  auto not_found = run_cli({"--server", url, "wait", "4", "--interval", "0.05"});
  CHECK(not_found.code == 1);
  CHECK(not_found.err.find("bisectctl: error: bisection 4 ended not_found: budget exhausted\n") != std::string::npos);

  auto start = std::chrono::steady_clock::now();
  auto timeout = run_cli({"--server", url, "wait", "6", "--timeout", "0.3", "--interval", "0.1"}, true);
  CHECK(timeout.code == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(timeout.err.find("\rbisection 6: deciding; 1 runs, 1 builds, 0 tested, P -\x1b[K") != std::string::npos);
  CHECK(timeout.err.find("bisectctl: error: bisection 6: still running after 0.3s\n") != std::string::npos);
}

TEST_CASE("bisectctl wait's progress line names the phase, the lab's work and the elapsed time", "[cli][commands]") {
  auto bisection = nlohmann::json::parse(R"({"id": 7, "state": "running", "runs": 12, "builds": 4, "p_culprit": 0.997,
    "created_at": "2026-12-02T09:00:00Z", "tested": [{"commit": "a", "status": "good"}],
    "requests": [{"commit": "0123456789abcdef", "purpose": "verify", "variant": "layout", "state": "running"},
                 {"commit": "fedcba9876543210", "purpose": "verify", "variant": "", "state": "queued"},
                 {"commit": "1111111111111111", "purpose": "bisect", "variant": "", "state": "failed"}]})");
  auto now = *bisectd::cli::parse_iso8601("2026-12-02T09:04:10Z");
  CHECK(bisectd::cli::progress_line(bisection, now) ==
        "bisection 7: verifying (measuring 0123456789 (layout), 1 queued); 12 runs, 4 builds, 1 tested, P 0.997, 4m");
  bisection["requests"] = nlohmann::json::array();
  CHECK(bisectd::cli::progress_line(bisection, now) ==
        "bisection 7: deciding; 12 runs, 4 builds, 1 tested, P 0.997, 4m");
}

TEST_CASE("bisectctl wait exits 130 when interrupted", "[cli][commands]") {
  bisectd::cli::reset_interrupt();
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    bisectd::cli::request_interrupt();
  });
  auto result = run_cli({"--server", shared_server().url(), "wait", "6", "--interval", "0.05"});
  interrupter.join();
  bisectd::cli::reset_interrupt();
  CHECK(result.code == 130);
  CHECK(result.err.find("bisectctl: error: interrupted\n") != std::string::npos);
}

TEST_CASE("bisectctl names a bad token file", "[cli][commands]") {
  auto dir = temp_dir("cli-token-");
  REQUIRE(bisectd::base::write_file_atomic(dir / "empty", "\n"));
  const std::string url = shared_server().url();
  auto missing = run_cli({"--server", url, "--token-file", (dir / "nope").string(), "tree", "remove", "demo"});
  CHECK(missing.code == 1);
  CHECK(missing.err == "bisectctl: error: token file " + (dir / "nope").string() + ": No such file or directory\n");
  auto empty = run_cli({"--server", url, "--token-file", (dir / "empty").string(), "tree", "remove", "demo"});
  CHECK(empty.code == 1);
  CHECK(empty.err == "bisectctl: error: token file " + (dir / "empty").string() + ": is empty\n");
}

TEST_CASE("bisectctl bisect cancel|retry and bisections rm post to the bisection", "[cli][commands]") {
  FakeServer& server = shared_server();
  const std::vector<std::string> global = {"--server", server.url(), "--token-file", token_file().string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), global.begin(), global.end());
    return run_cli(args);
  };
  auto cancel = with({"bisect", "cancel", "4"});
  CHECK(cancel.code == 0);
  CHECK(cancel.out == "cancelled bisection 4\n");
  CHECK(server.requests().back()["path"] == "/api/v1/bisections/4/cancel");
  CHECK(server.requests().back()["method"] == "POST");

  auto retry = with({"bisect", "retry", "4"});
  CHECK(retry.out == "retrying bisection 4\n");
  CHECK(server.requests().back()["path"] == "/api/v1/bisections/4/retry");

  auto rm = with({"bisections", "rm", "4", "--purge"});
  CHECK(rm.code == 0);
  CHECK(server.requests().back()["method"] == "DELETE");
  CHECK(server.requests().back()["query"] == "purge=1");

  auto bad = with({"bisect", "cancel", "four"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "bisectctl: error: bisection id 'four': must be a positive integer\n");
}

TEST_CASE("bisectctl tree show and tree set", "[cli][commands]") {
  FakeServer& server = shared_server();
  auto show = run_cli({"--server", server.url(), "tree", "show", "demo"});
  CHECK(show.code == 0);
  CHECK(show.out.find("notify:   a@example.org, b@example.org\n") != std::string::npos);
  CHECK(show.out.find("heads:    master 0123456789\n") != std::string::npos);
  CHECK(show.out.find("poll:     5m\n") != std::string::npos);
  CHECK(show.out.find("mail:     private (notify list only)\n") != std::string::npos);

  auto set = run_cli({"--server", server.url(), "--token-file", token_file().string(), "tree", "set", "demo",
                      "--no-notify", "--public", "--poll-interval", "5m"});
  CHECK(set.code == 0);
  auto body = server.requests().back()["body"];
  CHECK(body == nlohmann::json{{"notify", nlohmann::json::array()}, {"private", false}, {"poll_interval_s", 300}});
  CHECK(set.out.find("mail:     public\n") != std::string::npos);

  auto nothing = run_cli({"--server", server.url(), "--token-file", token_file().string(), "tree", "set", "demo"});
  CHECK(nothing.code != 0);
  CHECK(nothing.err.find("nothing to change") != std::string::npos);

  auto bad = run_cli({"--server", server.url(), "--token-file", token_file().string(), "tree", "set", "demo",
                      "--poll-interval", "soon"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "bisectctl: error: --poll-interval 'soon': must be a positive duration such as 60s, 5m or 1h\n");
}

TEST_CASE("bisectctl detections lists the watcher's decisions", "[cli][commands]") {
  FakeServer& server = shared_server();
  auto result = run_cli({"--server", server.url(), "detections", "--tree", "demo"});
  CHECK(result.code == 0);
  CHECK(result.out.find("0123456789..89abcdef01  not confirmed -11.1% (p=0.589): no bisection") != std::string::npos);
  CHECK(result.out.find("confirmed -15.2% (p=0.0001): bisection 3") != std::string::npos);
  CHECK(server.requests().back()["query"] == "tree=demo");
}

TEST_CASE("bisectctl logs --follow reads on from next_offset until the request ends", "[cli][commands]") {
  FakeServer& server = shared_server();
  auto result = run_cli({"--server", server.url(), "logs", "console", "12", "--follow"});
  CHECK(result.code == 0);
  CHECK(result.out == "Linux version\nlogin ok.\n");
  auto requests = server.requests();
  CHECK(requests.back()["query"] == "offset=24");

  auto empty = run_cli({"--server", server.url(), "logs", "build", "12"});
  CHECK(empty.code == 0);
  CHECK(empty.out.empty());
  CHECK(empty.err.find("no build log yet for request 12") != std::string::npos);

  auto kind = run_cli({"--server", server.url(), "logs", "kernel", "12"});
  CHECK(kind.code == 2);
}

TEST_CASE("show: the cost lines, machine time in its own column", "[cli]") {
  nlohmann::json b = {{"id", 7},         {"tree", "linux"}, {"job", "kbench"},   {"state", "found"},
                      {"runs", 66},      {"builds", 9},     {"boots", 40},       {"runs_reused", 20},
                      {"machine_seconds", 472.4}};
  auto text = bisectd::cli::render_bisection(b, 0);
  CHECK(text.find("runs        66\n") != std::string::npos);
  CHECK(text.find("machine time 7m52s (lab machines held for its visits)\n") != std::string::npos);
  b["machine_seconds"] = 0; // not counted (an older daemon, or nothing ran yet): no line
  CHECK(bisectd::cli::render_bisection(b, 0).find("machine time") == std::string::npos);
}
