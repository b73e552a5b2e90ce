#include "git_fixture.hpp"

#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

namespace bisectd::test {

namespace {

std::filesystem::path temp_parent() {
  const char* configured = std::getenv("BISECTD_TEST_TMP");
  std::filesystem::path parent = configured != nullptr && *configured != '\0' ? std::filesystem::path(configured)
                                                                              : std::filesystem::temp_directory_path();
  std::filesystem::create_directories(parent);
  return parent;
}

} // namespace

GitFixture::GitFixture() {
  auto dir = base::make_temp_dir("vcs-test-", temp_parent());
  REQUIRE(dir.has_value());
  m_dir = *dir;
  std::filesystem::create_directories(origin());
  git({"init", "-q", "-b", "master"});
}

GitFixture::~GitFixture() {
  if (std::getenv("BISECTD_KEEP_TMP") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
}

std::string GitFixture::git(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  base::Command command;
  command.argv = {"git",
                  "-c",
                  "user.name=Test Author",
                  "-c",
                  "user.email=author@example.org",
                  "-c",
                  "commit.gpgsign=false",
                  "-c",
                  "core.hooksPath=/dev/null"};
  command.argv.insert(command.argv.end(), args.begin(), args.end());
  command.cwd = cwd.empty() ? origin() : cwd;
  std::string date = "@" + std::to_string(1700000000 + 60 * m_tick) + " +0100";
  command.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}, {"HOME", m_dir.string()},
                 {"GIT_AUTHOR_DATE", date},    {"GIT_COMMITTER_DATE", date},       {"LC_ALL", "C"}};
  auto status = base::run(command);
  REQUIRE(status.has_value());
  INFO(base::describe_argv(command.argv) << "\n" << status->err);
  REQUIRE(status->ok());
  return std::string(base::trim(status->out));
}

std::string GitFixture::commit(const std::string& message,
                               const std::map<std::string, std::optional<std::string>>& files) {
  for (const auto& [path, content] : files) {
    std::filesystem::path full = origin() / path;
    if (content) {
      std::filesystem::create_directories(full.parent_path());
      std::ofstream(full, std::ios::binary) << *content;
    } else {
      std::filesystem::remove(full);
    }
  }
  ++m_tick;
  git({"add", "-A"});
  git({"commit", "-q", "--allow-empty", "-m", message});
  return git({"rev-parse", "HEAD"});
}

MergeHistory build_merge_history(GitFixture& fixture) {
  MergeHistory h;
  h.a = fixture.commit("A", {{"a.txt", "1\n"}});
  h.b = fixture.commit("B", {{"a.txt", "2\n"}});
  fixture.git({"checkout", "-q", "-b", "topic"});
  h.t1 = fixture.commit("T1", {{"t.txt", "1\n"}});
  h.t2 = fixture.commit("T2", {{"t.txt", "2\n"}});
  fixture.git({"checkout", "-q", "master"});
  h.c = fixture.commit("C", {{"c.txt", "1\n"}});
  fixture.commit_merge("topic", "Merge branch 'topic'");
  h.m = fixture.git({"rev-parse", "HEAD"});
  h.d = fixture.commit("D", {{"d.txt", "1\n"}});
  return h;
}

SharedHistory& shared_history() {
  static std::unique_ptr<SharedHistory> shared = [] {
    auto made = std::make_unique<SharedHistory>();
    made->h = build_merge_history(made->fixture);
    return made;
  }();
  return *shared;
}

void GitFixture::commit_merge(const std::string& branch, const std::string& message) {
  ++m_tick;
  git({"merge", "-q", "--no-ff", "-m", message, branch});
}

void GitFixture::commit_merge_many(const std::vector<std::string>& branches, const std::string& message) {
  ++m_tick;
  std::vector<std::string> args{"merge", "-q", "--no-ff", "-m", message};
  args.insert(args.end(), branches.begin(), branches.end());
  git(args);
}

void put_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace bisectd::test
