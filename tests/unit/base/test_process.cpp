#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/process_tree.hpp"
#include "base/strings.hpp"

#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/resource.h>
#include <signal.h>
#include <unistd.h>

using namespace bisectd;
using namespace std::chrono_literals;

TEST_CASE("base::run captures output and exit code", "[base]") {
  base::Command cmd;
  cmd.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->code == 3);
  CHECK(status->out == "out\n");
  CHECK(status->err == "err\n");
  CHECK_FALSE(status->ok());
}

TEST_CASE("base::run passes argv untouched by any shell", "[base]") {
  base::Command cmd;
  cmd.argv = {"printf", "%s|", "a b", "$(id)", "'quoted'", ";ls"};
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->out == "a b|$(id)|'quoted'|;ls|");
}

TEST_CASE("base::run kills the process group on timeout", "[base]") {
  base::Command cmd;
  cmd.argv = {"sh", "-c", "sleep 30 & sleep 30"};
  cmd.timeout = 300ms;
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->timed_out);
  CHECK(status->duration < 10s);
}

TEST_CASE("base::run feeds stdin and env, honours cwd", "[base]") {
  base::Command cmd;
  cmd.argv = {"sh", "-c", "cat; echo \"$BISECTD_X\"; pwd"};
  cmd.stdin_data = "hello\n";
  cmd.env = {{"BISECTD_X", "x y"}};
  cmd.cwd = "/tmp";
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->out == "hello\nx y\n/tmp\n");
}

TEST_CASE("base::run reads stdin from a file, and refuses a link in its place", "[base]") {
  auto dir = std::filesystem::temp_directory_path() / ("bisectd-stdin-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string big(300 * 1024, 'x'); // beyond a pipe's buffer: the child reads the file, nothing is pumped
  REQUIRE(base::write_file_atomic(dir / "in", big + "end\n"));
  base::Command cmd;
  cmd.argv = {"sh", "-c", "wc -c; tail -c 4"};
  cmd.stdin_path = dir / "in";
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->out == std::to_string(big.size() + 4) + "\nend\n");
  std::filesystem::create_symlink(dir / "in", dir / "link");
  cmd.stdin_path = dir / "link";
  auto refused = base::run(cmd);
  CHECK_FALSE(refused);
  std::filesystem::remove_all(dir);
}

TEST_CASE("base::run reports a missing program", "[base]") {
  base::Command cmd;
  cmd.argv = {"bisectd-no-such-program"};
  auto status = base::run(cmd);
  REQUIRE_FALSE(status);
  CHECK(status.error().code == ErrorCode::not_found);
}

TEST_CASE("base::run writes stdout to a file", "[base]") {
  auto dir = base::make_temp_dir("bisectd-test-");
  REQUIRE(dir);
  base::Command cmd;
  cmd.argv = {"sh", "-c", "echo to-file; echo also >&2"};
  cmd.stdout_path = *dir / "log";
  cmd.stderr_to_stdout = true;
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->ok());
  CHECK(base::read_file(*dir / "log").value() == "to-file\nalso\n");
  std::filesystem::remove_all(*dir);
}

TEST_CASE("base::run caps a file's output to its head and tail", "[base]") {
  auto dir = base::make_temp_dir("bisectd-test-");
  REQUIRE(dir);
  base::Command cmd;
  // 20 MB of lines between a first and a last line: the file keeps both and far less than the whole.
  cmd.argv = {"sh", "-c", "echo first; yes junk-line | head -c 20000000; echo result: 42 >&2"};
  cmd.stdout_path = *dir / "log";
  cmd.stdout_limit = 64 * 1024;
  cmd.stderr_to_stdout = true;
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->ok());
  auto log = base::read_file(*dir / "log").value();
  CHECK(log.starts_with("first\njunk-line\n"));
  CHECK(log.ends_with("junk-line\nresult: 42\n"));
  CHECK(log.find("bytes of output left out here]") != std::string::npos);
  CHECK(log.size() < 70 * 1024);
  std::filesystem::remove_all(*dir);
}

TEST_CASE("base::run with a capped file ends with the child, not with a detached holder of its stdout", "[base]") {
  auto dir = base::make_temp_dir("bisectd-test-");
  REQUIRE(dir);
  base::Command cmd;
  cmd.argv = {"sh", "-c", "setsid sleep 30 & echo done"};
  cmd.stdout_path = *dir / "log";
  cmd.stdout_limit = 1024;
  cmd.stderr_to_stdout = true;
  cmd.timeout = 20s;
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->ok());
  CHECK(status->duration < 10s);
  CHECK(base::read_file(*dir / "log").value() == "done\n");
  std::filesystem::remove_all(*dir);
}

TEST_CASE("base::run_checked turns failure into an error naming the program", "[base]") {
  base::Command cmd;
  cmd.argv = {"sh", "-c", "echo boom >&2; exit 2"};
  auto status = base::run_checked(cmd, ErrorCode::build_failed);
  REQUIRE_FALSE(status);
  CHECK(status.error().code == ErrorCode::build_failed);
  CHECK(status.error().message.find("exit 2: boom") != std::string::npos);
}

TEST_CASE("base::run does not leak the parent's descriptors into the child", "[base]") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0); // no O_CLOEXEC on purpose
  // High numbers, so the listing's own descriptors (ls opens one for /proc/self/fd) cannot collide.
  int fds[2] = {::dup2(pipe_fds[0], 200), ::dup2(pipe_fds[1], 201)};
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  base::Command cmd;
  cmd.argv = {"sh", "-c", "ls /proc/self/fd"};
  auto status = base::run(cmd);
  ::close(fds[0]);
  ::close(fds[1]);
  REQUIRE(status);
  auto fd_lines = status->out;
  CHECK(fd_lines.find(std::to_string(fds[0]) + "\n") == std::string::npos);
  CHECK(fd_lines.find(std::to_string(fds[1]) + "\n") == std::string::npos);
}

TEST_CASE("base::run reports progress while a long child runs, captured or not", "[base]") {
  for (bool to_file : {false, true}) {
    auto dir = base::make_temp_dir("bisectd-progress");
    REQUIRE(dir.has_value());
    base::Command cmd;
    cmd.argv = {"sleep", "0.45"};
    if (to_file) {
      cmd.stdout_path = *dir / "out.log";
    }
    std::vector<std::chrono::milliseconds> ticks;
    cmd.progress_interval = 100ms;
    cmd.progress = [&](std::chrono::milliseconds elapsed) { ticks.push_back(elapsed); };
    auto status = base::run(cmd);
    REQUIRE(status.has_value());
    CHECK(status->ok());
    REQUIRE(ticks.size() >= 2);
    CHECK(ticks.front() >= 100ms);
    CHECK(ticks.back() > ticks.front());
    CHECK(ticks.size() <= 5); // at most one per interval
    std::filesystem::remove_all(*dir);
  }
  base::Command quiet;
  quiet.argv = {"true"};
  int calls = 0;
  quiet.progress = [&](std::chrono::milliseconds) { ++calls; }; // no interval: never called
  CHECK(base::run(quiet).has_value());
  CHECK(calls == 0);
}

TEST_CASE("base::run starts an idle-priority child under SCHED_IDLE", "[base]") {
  // Field 41 of /proc/self/stat is the scheduling policy (SCHED_IDLE = 5, SCHED_OTHER = 0).
  auto policy_of = [](bool idle) {
    base::Command cmd;
    cmd.argv = {"cat", "/proc/self/stat"};
    cmd.idle_priority = idle;
    auto status = base::run(cmd);
    REQUIRE(status);
    REQUIRE(status->ok());
    auto fields = base::split(base::trim(status->out.substr(status->out.rfind(')') + 2)), ' ');
    REQUIRE(fields.size() > 38);
    return fields[38]; // fields after the command name start at field 3
  };
  CHECK(policy_of(true) == std::to_string(SCHED_IDLE));
  CHECK(policy_of(false) == "0");
}

namespace {

// True once `pid` is gone or a zombie (killed, not yet reaped by its new parent), polled for up to `ms`.
bool ends_within(pid_t pid, int ms) {
  for (int i = 0; i < ms / 10; ++i) {
    auto stat = base::read_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat || stat->find(") Z") != std::string::npos) {
      return true;
    }
    ::usleep(10'000);
  }
  return false;
}

// A shell line that starts `command` in a session of its own and prints its pid once it has left the shell's
// process group (until then, the group's kill at the end of base::run would still reach it).
std::string detach(const std::string& command) {
  return command + " </dev/null >/dev/null 2>&1 & p=$!; i=0; "
                   "while [ \"$(cut -d' ' -f6 /proc/$p/stat)\" != \"$p\" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; "
                   "echo $p";
}

pid_t started_pid(const Result<base::ExitStatus>& status) {
  REQUIRE(status);
  auto pid = static_cast<pid_t>(std::stol(std::string(base::trim(status->out))));
  REQUIRE(pid > 1);
  return pid;
}

} // namespace

TEST_CASE("base::run kills descendants that left the process group", "[base]") {
  base::Command cmd;
  cmd.argv = {"sh", "-c", detach("setsid sleep 60")};
  SECTION("when the command exits") {
    CHECK(ends_within(started_pid(base::run(cmd)), 5000));
  }
  SECTION("when the command times out") {
    cmd.argv = {"sh", "-c", detach("setsid sleep 60") + "; sleep 30"};
    cmd.timeout = 500ms;
    auto status = base::run(cmd);
    REQUIRE(status);
    CHECK(status->timed_out);
    CHECK(ends_within(started_pid(status), 5000));
  }
  SECTION("unless the command is meant to leave them running") {
    cmd.leave_detached = true;
    auto pid = started_pid(base::run(cmd));
    CHECK_FALSE(ends_within(pid, 500));
    ::kill(pid, SIGKILL);
  }
}

TEST_CASE("base::kill_orphans_of_owner kills what another daemon of the owner left", "[base]") {
  // Marks as a previous daemon (pid 1, never this process) and as this one would set them.
  auto start = [](const std::string& mark) {
    base::Command cmd;
    cmd.argv = {"sh", "-c", detach("BISECTD_PROCESS_TREE=\"$1\" setsid sleep 60"), "sh", mark};
    cmd.leave_detached = true;
    return started_pid(base::run(cmd));
  };
  auto orphan = start("test-owner-a/1/3");
  auto ours = start("test-owner-a/" + std::to_string(::getpid()) + "/9");
  auto other_owner = start("test-owner-b/1/3");
  auto killed = base::kill_orphans_of_owner("test-owner-a");
  CHECK(killed == std::vector<pid_t>{orphan});
  CHECK(ends_within(orphan, 5000));
  CHECK_FALSE(ends_within(ours, 500));
  CHECK_FALSE(ends_within(other_owner, 500));
  ::kill(ours, SIGKILL);
  ::kill(other_owner, SIGKILL);
}

TEST_CASE("base::run returns the child's own rusage", "[base]") {
  base::Command cmd;
  // A busy loop of about 0.3 s of CPU, then a sleep that uses none: user time counts, the sleep does not.
  cmd.argv = {"sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 0.3"};
  auto status = base::run(cmd);
  REQUIRE(status);
  REQUIRE(status->ok());
  REQUIRE(status->usage);
  auto cpu = status->usage->user_seconds + status->usage->system_seconds;
  CHECK(status->usage->user_seconds > 0.01);
  CHECK(cpu < std::chrono::duration<double>(status->duration).count());
  CHECK(status->usage->minor_faults > 0);
  CHECK(status->usage->voluntary_switches > 0); // the sleep blocks at least once
  CHECK(status->usage->max_rss_kb == 0);        // the shell is smaller than this test: its peak is unknown
}

TEST_CASE("base::run: a child's peak memory is its own, or unknown", "[base]") {
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  // dd's buffer, filled from /dev/zero, is resident: 256 MiB more than this test process has ever used.
  auto mib = std::to_string(self.ru_maxrss / 1024 + 256);
  base::Command cmd;
  cmd.argv = {"dd", "if=/dev/zero", "of=/dev/null", "bs=" + mib + "M", "count=1", "status=none"};
  auto status = base::run(cmd);
  REQUIRE(status);
  REQUIRE(status->ok());
  REQUIRE(status->usage);
  CHECK(status->usage->max_rss_kb > (self.ru_maxrss / 1024 + 200) * 1024);
}
