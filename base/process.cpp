#include "base/process.hpp"

#include "base/fd.hpp"
#include "base/head_tail.hpp"
#include "base/process_tree.hpp"
#include "base/sandbox_init.hpp"
#include "base/strings.hpp"
#include "base/units.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace bisectd::base {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> build_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto name = entry.substr(0, entry.find('='));
    if (!overrides.contains(std::string(name))) {
      env.emplace_back(entry);
    }
  }
  for (const auto& [name, value] : overrides) {
    env.push_back(name + "=" + value);
  }
  return env;
}

std::vector<char*> to_c_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

void append_limited(std::string& buffer, const char* data, std::size_t n, std::size_t limit) {
  if (buffer.size() < limit) {
    buffer.append(data, std::min(n, limit - buffer.size()));
  }
}

// The child's stdio wiring, kept alive until the child has been spawned.
struct ChildIo {
  Fd stdin_read, stdin_write;
  Fd out_read, out_write;
  Fd err_read, err_write;
  // stdout_limit: the child writes into a pipe, the file gets its head and tail from here.
  Fd out_file;
  std::optional<HeadTail> out_cap;
  // A sandboxed child: bwrap's --info-fd pipe, which names the process inside its pid namespace, and a pidfd of
  // that process once the child had to be killed.
  Fd sandbox_info_read, sandbox_info_write;
  Fd sandbox_init;
};

// True when the child has exited (it is not reaped: wait_exit does that).
bool child_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

Result<ChildIo> prepare_io(const Command& command) {
  ChildIo io;
  if (command.stdin_path.empty()) {
    BISECTD_TRY_ASSIGN(auto in, make_pipe());
    io.stdin_read = std::move(in.read);
    io.stdin_write = std::move(in.write);
  } else {
    BISECTD_TRY_ASSIGN(io.stdin_read, open_input(command.stdin_path));
  }
  if (!command.stdout_path.empty() && command.stdout_limit > 0) {
    BISECTD_TRY_ASSIGN(io.out_file, open_output(command.stdout_path, command.append));
    io.out_cap.emplace(command.stdout_limit);
  }
  if (command.stdout_path.empty() || io.out_cap) {
    BISECTD_TRY_ASSIGN(auto out, make_pipe());
    io.out_read = std::move(out.read);
    io.out_write = std::move(out.write);
  } else {
    BISECTD_TRY_ASSIGN(io.out_write, open_output(command.stdout_path, command.append));
  }
  if (!command.stderr_to_stdout) {
    if (command.stderr_path.empty()) {
      BISECTD_TRY_ASSIGN(auto err, make_pipe());
      io.err_read = std::move(err.read);
      io.err_write = std::move(err.write);
    } else {
      BISECTD_TRY_ASSIGN(io.err_write, open_output(command.stderr_path, command.append));
    }
  }
  return io;
}

Result<pid_t> spawn(const Command& command, ChildIo& io, const std::string& tree_mark) {
  std::vector<std::string> argv = command.argv;
  if (command.idle_priority && find_program("chrt")) {
    // glibc's posix_spawn accepts only SCHED_OTHER/FIFO/RR, so util-linux's chrt sets SCHED_IDLE and execs; inside
    // the sandbox when there is one, so that it runs with the job's environment only where the job's code does.
    argv.insert(argv.begin(), {"chrt", "--idle", "0"});
  }
  // A sandboxed command's environment is handed to bwrap as --setenv: bwrap itself runs with the daemon's own, never
  // with what a job sets (an LD_PRELOAD there would run the tree's code outside the sandbox).
  auto overrides = command.env;
  if (command.sandbox) {
    if (auto policy = sandbox_policy(); policy.enabled) {
      argv = sandbox_argv(policy, *command.sandbox, command.env, command.cwd, argv);
      overrides.clear();
      BISECTD_TRY_ASSIGN(auto info, make_pipe());
      io.sandbox_info_read = std::move(info.read);
      io.sandbox_info_write = std::move(info.write);
      argv.insert(argv.begin() + 1, {"--info-fd", std::to_string(k_sandbox_info_fd)});
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, io.stdin_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, io.out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, command.stderr_to_stdout ? io.out_write.get() : io.err_write.get(), 2);
  int first_closed = 3;
  if (io.sandbox_info_write.valid()) {
    posix_spawn_file_actions_adddup2(&actions, io.sandbox_info_write.get(), k_sandbox_info_fd);
    first_closed = k_sandbox_info_fd + 1;
  }
  // Nothing else leaks into the child (listening sockets, the database): a killed daemon's children must not
  // keep its port or files open.
  posix_spawn_file_actions_addclosefrom_np(&actions, first_closed);
  if (!command.cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, command.cwd.c_str());
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0); // own process group, so a timeout kills grandchildren too
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  sigaddset(&default_signals, SIGTERM);
  sigaddset(&default_signals, SIGINT);
  sigaddset(&default_signals, SIGHUP);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigdefault(&attr, &default_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  overrides[k_process_tree_variable] = command.leave_detached ? "" : tree_mark;
  std::vector<std::string> env = build_environment(overrides);
  auto c_argv = to_c_array(argv);
  auto c_env = to_c_array(env);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, c_argv[0], &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    auto code = rc == ENOENT ? ErrorCode::not_found : ErrorCode::io;
    std::string where = command.cwd.empty() ? "" : " (in " + command.cwd.string() + ")";
    return make_error(code, "cannot run " + command.argv[0] + where + ": " + std::strerror(rc));
  }
  return pid;
}

// Kills the child's process group: SIGTERM, SIGKILL after up to 2 s of grace. A sandboxed child's pid namespace is
// first pinned (bwrap, still alive, is the proof that the pid it named is that process), so that run() can wait
// until the namespace is gone.
void kill_child(pid_t pid, ChildIo& io) {
  io.sandbox_init = open_sandbox_init(io.sandbox_info_read, pid, std::chrono::milliseconds(0));
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 20; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) != 0) {
      ::kill(-pid, SIGKILL);
      return;
    }
    ::usleep(100'000);
  }
  ::kill(-pid, SIGKILL);
}

// Waits (at most `bound`) until no process of group `pgid` is left: SIGKILLed members may need a while to die
// (SCHED_IDLE ones on a loaded host), and a dying compiler can still write its output.
void wait_group_gone(pid_t pgid, std::chrono::milliseconds bound) {
  auto deadline = Clock::now() + bound;
  while (::kill(-pgid, 0) == 0 && Clock::now() < deadline) {
    ::usleep(5'000);
  }
}

// Calls command.progress when another progress_interval has passed since `last`.
void report_progress(const Command& command, Clock::time_point start, Clock::time_point& last) {
  if (!command.progress || command.progress_interval.count() <= 0) {
    return;
  }
  auto now = Clock::now();
  if (now - last >= command.progress_interval) {
    last = now;
    command.progress(std::chrono::duration_cast<std::chrono::milliseconds>(now - start));
  }
}

// Pumps stdin/stdout/stderr until the child closes them, the timeout passes or cancel is raised.
// Returns false when the child had to be killed.
struct PumpOutcome {
  bool timed_out = false;
  bool cancelled = false;
};

// The first failure to write the child's output into its file (a full disk) is kept for the caller: what the log
// lacks then is our side's doing, not the command's.
void keep_output_error(ExitStatus& status, const Status& written) {
  if (!written && !status.output_error) {
    status.output_error = written.error();
  }
}

PumpOutcome pump(const Command& command, pid_t pid, ChildIo& io, ExitStatus& status, Clock::time_point start) {
  PumpOutcome outcome;
  std::size_t stdin_written = 0;
  if (command.stdin_data.empty() || !io.stdin_write.valid()) {
    io.stdin_write.reset();
  } else {
    ::fcntl(io.stdin_write.get(), F_SETFL, O_NONBLOCK);
  }
  char buffer[65536];
  auto last_progress = start;
  while (io.out_read.get() >= 0 || io.err_read.get() >= 0 || io.stdin_write.get() >= 0) {
    pollfd fds[3];
    int n = 0;
    int out_i = -1, err_i = -1, in_i = -1;
    if (io.out_read.get() >= 0) {
      fds[n] = {io.out_read.get(), POLLIN, 0};
      out_i = n++;
    }
    if (io.err_read.get() >= 0) {
      fds[n] = {io.err_read.get(), POLLIN, 0};
      err_i = n++;
    }
    if (io.stdin_write.get() >= 0) {
      fds[n] = {io.stdin_write.get(), POLLOUT, 0};
      in_i = n++;
    }
    ::poll(fds, static_cast<nfds_t>(n), 100);
    auto drain = [&](int index, Fd& fd, std::string& sink) {
      if (index >= 0 && (fds[index].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        auto got = ::read(fd.get(), buffer, sizeof buffer);
        if (got > 0 && &fd == &io.out_read && io.out_cap) {
          auto kept = io.out_cap->add(std::string_view(buffer, static_cast<std::size_t>(got)));
          keep_output_error(status, write_all(io.out_file.get(), kept));
        } else if (got > 0) {
          append_limited(sink, buffer, static_cast<std::size_t>(got), command.capture_limit);
        } else if (got == 0 || errno != EINTR) {
          fd.reset();
        }
      }
    };
    drain(out_i, io.out_read, status.out);
    drain(err_i, io.err_read, status.err);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      auto left = command.stdin_data.size() - stdin_written;
      auto put = ::write(io.stdin_write.get(), command.stdin_data.data() + stdin_written, left);
      if (put > 0) {
        stdin_written += static_cast<std::size_t>(put);
      }
      if (put < 0 && errno != EAGAIN && errno != EINTR) {
        io.stdin_write.reset();
      }
      if (stdin_written == command.stdin_data.size()) {
        io.stdin_write.reset();
      }
    }
    report_progress(command, start, last_progress);
    bool over_time = command.timeout.count() > 0 && Clock::now() - start > command.timeout;
    bool cancelled = command.cancel != nullptr && command.cancel->load();
    if (over_time || cancelled) {
      kill_child(pid, io);
      outcome.timed_out = over_time;
      outcome.cancelled = cancelled && !over_time;
      return outcome;
    }
    // stdout went to a file and stdin is done: nothing to pump, just wait for the exit.
    if (io.out_read.get() < 0 && io.err_read.get() < 0 && io.stdin_write.get() < 0) {
      break;
    }
    // A capped stdout is a pipe a detached descendant may hold open: the command has ended when the child has,
    // as it would writing to the file itself. What is already in the pipe is still read.
    if (io.out_cap && io.out_read.get() >= 0 && child_exited(pid)) {
      ::fcntl(io.out_read.get(), F_SETFL, O_NONBLOCK);
      for (ssize_t got; (got = ::read(io.out_read.get(), buffer, sizeof buffer)) > 0;) {
        auto kept = io.out_cap->add(std::string_view(buffer, static_cast<std::size_t>(got)));
        keep_output_error(status, write_all(io.out_file.get(), kept));
      }
      io.out_read.reset();
    }
  }
  return outcome;
}

long own_peak_rss_kb() {
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  return self.ru_maxrss;
}

ChildUsage to_usage(const rusage& ru) {
  auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  return ChildUsage{.user_seconds = seconds(ru.ru_utime),
                    .system_seconds = seconds(ru.ru_stime),
                    .voluntary_switches = ru.ru_nvcsw,
                    .involuntary_switches = ru.ru_nivcsw,
                    .minor_faults = ru.ru_minflt,
                    .major_faults = ru.ru_majflt,
                    .max_rss_kb = ru.ru_maxrss > own_peak_rss_kb() ? ru.ru_maxrss : 0};
}

// Waits for the exit while still honouring the timeout and cancel flag (stdio already closed).
PumpOutcome wait_exit(const Command& command, pid_t pid, ChildIo& io, int& wstatus, Clock::time_point start,
                      std::optional<ChildUsage>& usage) {
  PumpOutcome outcome;
  auto last_progress = start;
  while (true) {
    rusage ru{};
    pid_t got = ::wait4(pid, &wstatus, WNOHANG, &ru);
    if (got == pid) {
      usage = to_usage(ru);
      return outcome;
    }
    if (got < 0 && errno != EINTR) {
      return outcome;
    }
    report_progress(command, start, last_progress);
    bool over_time = command.timeout.count() > 0 && Clock::now() - start > command.timeout;
    bool cancelled = command.cancel != nullptr && command.cancel->load();
    if (over_time || cancelled) {
      kill_child(pid, io);
      ::waitpid(pid, &wstatus, 0);
      outcome.timed_out = over_time;
      outcome.cancelled = cancelled && !over_time;
      return outcome;
    }
    ::usleep(2'000);
  }
}

} // namespace

std::string ExitStatus::describe() const {
  if (timed_out) {
    return "timed out after " + format_duration(duration);
  }
  if (signal != 0) {
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exit " + std::to_string(code);
}

Result<ExitStatus> run(const Command& command) {
  if (command.argv.empty()) {
    return make_error(ErrorCode::invalid_input, "empty command");
  }
  BISECTD_TRY_ASSIGN(auto io, prepare_io(command));
  auto start = Clock::now();
  const auto tree_mark = new_process_tree_mark();
  BISECTD_TRY_ASSIGN(pid_t pid, spawn(command, io, tree_mark));
  // Close the child's ends in the parent so EOF arrives when the child exits.
  io.stdin_read.reset();
  io.out_write.reset();
  io.err_write.reset();
  io.sandbox_info_write.reset();

  ExitStatus status;
  auto outcome = pump(command, pid, io, status, start);
  if (io.out_cap) {
    // A full disk cuts the log short; the command's exit status does not depend on it (output_error says so).
    keep_output_error(status, write_all(io.out_file.get(), io.out_cap->finish()));
    io.out_file.reset();
  }
  int wstatus = 0;
  if (outcome.timed_out || outcome.cancelled) {
    ::waitpid(pid, &wstatus, 0);
  } else {
    outcome = wait_exit(command, pid, io, wstatus, start, status.usage);
  }
  // Anything the command left behind goes too: its group, and descendants that left the group (setsid). The
  // next command may reuse the worktree at once: whatever this one started is gone when run() returns.
  ::kill(-pid, SIGKILL);
  kill_sandbox_init(io.sandbox_init, std::chrono::seconds(10));
  wait_group_gone(pid, std::chrono::seconds(10));
  if (!command.leave_detached) {
    kill_process_tree(tree_mark);
  }
  status.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  status.timed_out = outcome.timed_out;
  if (outcome.cancelled) {
    return make_error(ErrorCode::cancelled, command.argv[0] + ": cancelled");
  }
  if (WIFEXITED(wstatus)) {
    status.code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    status.signal = WTERMSIG(wstatus);
  }
  return status;
}

Result<ExitStatus> run_checked(const Command& command, ErrorCode failure_code) {
  BISECTD_TRY_ASSIGN(auto status, run(command));
  if (status.ok()) {
    return status;
  }
  const std::string& text = status.err.empty() ? status.out : status.err;
  auto tail = std::string(trim(text.size() > 400 ? std::string_view(text).substr(text.size() - 400) : text));
  auto code = status.timed_out ? ErrorCode::timeout : failure_code;
  std::string message = describe_argv(command.argv) + ": " + status.describe();
  if (!tail.empty()) {
    message += ": " + tail;
  }
  return make_error(code, message);
}

std::optional<std::filesystem::path> find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? std::optional<std::filesystem::path>(program) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  for (const auto& dir : split(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

} // namespace bisectd::base
