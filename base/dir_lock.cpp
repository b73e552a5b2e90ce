#include "base/dir_lock.hpp"

#include "base/strings.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace bisectd::base {

Result<DirLock> DirLock::acquire(const std::filesystem::path& dir, const std::string& name) {
  auto path = dir / name;
  // O_CLOEXEC: a child left running must not keep the lock of a daemon that has gone.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
  }
  DirLock lock(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    if (error != EWOULDBLOCK) {
      return make_error(ErrorCode::io, path.string() + ": flock: " + std::strerror(error));
    }
    char buffer[32] = {};
    auto n = ::pread(fd, buffer, sizeof buffer - 1, 0);
    std::string holder = n > 0 ? std::string(trim(std::string_view(buffer, static_cast<std::size_t>(n)))) : "?";
    return make_error(ErrorCode::conflict,
                      dir.string() + " is in use by another bisectd (pid " + holder + ", lock " + path.string() + ")");
  }
  auto pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
  }
  return lock;
}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = other.m_fd;
    other.m_fd = -1;
  }
  return *this;
}

DirLock::~DirLock() {
  if (m_fd >= 0) {
    ::close(m_fd); // releases the flock
  }
}

} // namespace bisectd::base
