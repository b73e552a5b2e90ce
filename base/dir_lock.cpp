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
  Fd owned(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!owned.valid()) {
    return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
  }
  int fd = owned.get();
  DirLock lock(std::move(owned));
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

} // namespace bisectd::base
