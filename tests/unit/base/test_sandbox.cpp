#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/sandbox.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

using namespace bisectd;

namespace {

std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

} // namespace

TEST_CASE("base::sandbox_argv hides, binds and filters the environment", "[base]") {
  base::SandboxPolicy policy{.enabled = true, .bwrap = "bwrap", .hidden = {"/", "/nonexistent-dir"}};
  ::setenv("BISECTD_TEST_SECRET", "s3cret", 1);
  auto argv = base::sandbox_argv(policy, {.writable = {"/tmp"}, .readable = {"/usr"}}, {{"JOB_VAR", "1"}}, "/tmp",
                                 {"sh", "-c", "echo hi"});
  CHECK(argv.front() == "bwrap");
  CHECK(std::count(argv.begin(), argv.end(), "--unshare-all") == 1);
  CHECK(std::count(argv.begin(), argv.end(), "--die-with-parent") == 1);
  CHECK(std::count(argv.begin(), argv.end(), "--clearenv") == 1);
  CHECK(std::count(argv.begin(), argv.end(), "/nonexistent-dir") == 0); // nothing to hide
  CHECK(std::count(argv.begin(), argv.end(), "BISECTD_TEST_SECRET") == 0);
  CHECK(after(argv, "JOB_VAR") == "1");
  CHECK(after(argv, "--chdir") == "/tmp");
  CHECK(after(argv, "--bind") == "/tmp");
  CHECK(after(argv, "--ro-bind") == "/"); // the system first, read-only; then what the step may see
  CHECK(std::vector<std::string>(argv.end() - 4, argv.end()) == std::vector<std::string>{"--", "sh", "-c", "echo hi"});
}

TEST_CASE("a sandboxed command sees only what it is given", "[base]") {
  if (auto why = base::sandbox_unusable("bwrap"); !why.empty()) {
    WARN("bwrap is not usable here, the sandbox is not exercised: " << why);
    return;
  }
  test::TempDir daemon_dir; // stands for the data dir: a secret and the step's worktree inside it
  auto worktree = daemon_dir.path() / "worktree";
  std::filesystem::create_directories(worktree);
  REQUIRE(base::write_file_atomic(daemon_dir.path() / "token", "secret-token\n"));
  base::set_sandbox_policy({.enabled = true, .bwrap = "bwrap", .hidden = {daemon_dir.path()}});
  ::setenv("BISECTD_TEST_SECRET", "s3cret", 1);

  base::Command cmd;
  cmd.argv = {"sh", "-c",
              "cat \"$1/token\" 2>/dev/null || echo no-token; echo \"env:${BISECTD_TEST_SECRET:-none}:$JOB_VAR\"; "
              "touch built && echo wrote; touch /usr/x 2>/dev/null || echo ro; grep -c : /proc/net/dev",
              "sh", daemon_dir.path().string()};
  cmd.env = {{"JOB_VAR", "job"}};
  cmd.cwd = worktree;
  cmd.sandbox = base::Sandbox{.writable = {worktree}, .readable = {}};
  auto status = base::run(cmd);
  base::set_sandbox_policy({});
  REQUIRE(status);
  INFO(status->out << status->err);
  CHECK(status->ok());
  CHECK(status->out == "no-token\nenv:none:job\nwrote\nro\n1\n"); // /proc/net/dev: lo only
  CHECK(std::filesystem::exists(worktree / "built"));
}

TEST_CASE("a sandboxed command's CPU time reaches the rusage", "[base]") {
  if (auto why = base::sandbox_unusable("bwrap"); !why.empty()) {
    WARN("bwrap is not usable here, the sandbox is not exercised: " << why);
    return;
  }
  base::set_sandbox_policy({.enabled = true, .bwrap = "bwrap", .hidden = {}});
  base::Command cmd;
  cmd.argv = {"sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"}; // about 0.3 s of CPU
  cmd.sandbox = base::Sandbox{};
  auto status = base::run(cmd);
  base::set_sandbox_policy({});
  REQUIRE(status);
  REQUIRE(status->ok());
  REQUIRE(status->usage);
  // bwrap itself uses a few milliseconds; the loop's own time must be there.
  CHECK(status->usage->user_seconds > 0.05);
}
