#include "base/sandbox_init.hpp"

#include "base/fs.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>

namespace bisectd::base {

namespace {

// Through syscall(2): glibc 2.36's <sys/pidfd.h> lacks C linkage for C++.
int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0U)); }
void pidfd_kill(int pidfd) { ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0U); }

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// bwrap writes `{\n    "child-pid": N\n}\n` once and closes the fd; everything up to the '}' (or EOF).
std::string read_info(const Fd& info, std::chrono::milliseconds bound) {
  std::string text;
  auto deadline = Clock::now() + bound;
  char buffer[256];
  while (text.find('}') == std::string::npos && text.size() < 4096) {
    pollfd fd{info.get(), POLLIN, 0};
    if (::poll(&fd, 1, remaining_ms(deadline)) <= 0) {
      break;
    }
    auto got = ::read(info.get(), buffer, sizeof buffer);
    if (got <= 0) {
      break;
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

pid_t child_pid_in(const std::string& info) {
  const std::string key = "\"child-pid\":";
  auto at = info.find(key);
  if (at == std::string::npos) {
    return 0;
  }
  try {
    return static_cast<pid_t>(std::stol(info.substr(at + key.size())));
  } catch (const std::exception&) {
    return 0;
  }
}

// The parent pid from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces and parentheses).
pid_t parent_of(pid_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) {
    return 0;
  }
  auto close = stat->rfind(')');
  if (close == std::string::npos || close + 4 >= stat->size()) {
    return 0;
  }
  try {
    return static_cast<pid_t>(std::stol(stat->substr(close + 4)));
  } catch (const std::exception&) {
    return 0;
  }
}

} // namespace

Fd open_sandbox_init(const Fd& info, pid_t bwrap_pid, std::chrono::milliseconds bound) {
  if (!info.valid()) {
    return {};
  }
  pid_t child = child_pid_in(read_info(info, bound));
  if (child <= 0) {
    return {};
  }
  Fd pidfd(pidfd_open(child));
  // Checked after opening: the pidfd pins the process, so a match cannot be a later reuse of the pid.
  if (pidfd.valid() && parent_of(child) != bwrap_pid) {
    return {};
  }
  return pidfd;
}

void kill_sandbox_init(const Fd& pidfd, std::chrono::milliseconds bound) {
  if (!pidfd.valid()) {
    return;
  }
  pidfd_kill(pidfd.get());
  auto deadline = Clock::now() + bound;
  pollfd fd{pidfd.get(), POLLIN, 0};
  while (::poll(&fd, 1, remaining_ms(deadline)) < 0 && errno == EINTR) {
  }
}

} // namespace bisectd::base
