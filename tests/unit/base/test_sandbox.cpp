#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/sandbox.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <thread>

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

namespace {

// Processes on this host whose command line holds `needle` (zombies have none: they hold nothing either).
int processes_with(const std::string& needle) {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    auto cmdline = base::read_file(entry.path() / "cmdline");
    if (cmdline && cmdline->find(needle) != std::string::npos && entry.path().filename() != "self") {
      ++found;
    }
  }
  return found;
}

} // namespace

// A cancelled prebuild's compiler went on after the worktree was handed on and wrote an old binary after the next
// checkout; make called it up to date and the bisection blamed the wrong commit. Killing bwrap does not kill the
// command it runs as pid 1 of its namespace (a namespace's init ignores its parent-death SIGKILL), and a starved
// SCHED_IDLE process dies late anyway: run() must return only once everything the command started is gone, whether
// it was cancelled or timed out.
TEST_CASE("a killed command is gone, descendants and all, when run() returns", "[base]") {
  if (auto why = base::sandbox_unusable("bwrap"); !why.empty()) {
    WARN("bwrap is not usable here, the sandbox is not exercised: " << why);
    return;
  }
  test::TempDir dir;
  for (int attempt = 0; attempt < 6; ++attempt) {
    const bool by_timeout = attempt % 2 == 1;
    const bool sandboxed = attempt < 4; // then the same without bwrap: the process group's members die late too
    base::set_sandbox_policy({.enabled = sandboxed, .bwrap = "bwrap", .hidden = {}});
    INFO("attempt " << attempt << (by_timeout ? ", timed out" : ", cancelled") << (sandboxed ? "" : ", unsandboxed"));
    std::atomic<bool> cancel{false};
    base::Command cmd;
    // A command and a descendant that ignore SIGTERM and keep writing into the worktree, as a compiler would.
    cmd.argv = {"sh", "-c",
                ": 31337.25; trap '' TERM; (while :; do echo x > out; done) & touch started; while :; do :; done"};
    cmd.cwd = dir.path();
    cmd.idle_priority = true; // as a prebuild
    cmd.sandbox = base::Sandbox{.writable = {dir.path()}, .readable = {}};
    if (by_timeout) {
      cmd.timeout = std::chrono::milliseconds(1500);
    } else {
      cmd.cancel = &cancel;
    }
    std::thread canceller([&] {
      for (int i = 0; !by_timeout && i < 500 && !std::filesystem::exists(dir.path() / "started"); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      cancel = true;
    });
    // Busy threads at normal priority starve the SCHED_IDLE sandbox, as a loaded build host does.
    std::atomic<bool> busy{true};
    std::vector<std::thread> load;
    for (unsigned i = 0; i < 2 * std::max(1u, std::thread::hardware_concurrency()); ++i) {
      load.emplace_back([&busy] {
        while (busy) {
        }
      });
    }
    auto status = base::run(cmd);
    canceller.join();
    int left = processes_with("31337.25");
    busy = false;
    for (auto& thread : load) {
      thread.join();
    }
    CHECK((by_timeout ? status && status->timed_out : !status));
    REQUIRE(left == 0);
    std::error_code ec;
    auto written = std::filesystem::last_write_time(dir.path() / "out", ec);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    REQUIRE(std::filesystem::last_write_time(dir.path() / "out", ec) == written); // nobody writes any more
    std::filesystem::remove(dir.path() / "started");
  }
  base::set_sandbox_policy({});
}
