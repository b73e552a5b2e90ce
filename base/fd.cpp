#include "base/fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace bisectd::base {

void Fd::reset(int fd) {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
  m_fd = fd;
}

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::io, std::string("pipe: ") + std::strerror(errno));
  }
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

Result<Fd> open_output(const std::filesystem::path& path, bool append, int mode) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) {
    return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
  }
  return Fd(fd);
}

Result<Fd> open_input(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
  }
  return Fd(fd);
}

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto put = ::write(fd, data.data(), data.size());
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      // A full file system is our side's trouble (retried), not a verdict on what was being written.
      bool full = put < 0 && is_disk_full(errno);
      return make_error(full ? ErrorCode::infra : ErrorCode::io,
                        put == 0 ? std::string("write: no progress") : std::strerror(errno));
    }
    data.remove_prefix(static_cast<std::size_t>(put));
  }
  return {};
}

bool is_disk_full(int error_number) { return error_number == ENOSPC || error_number == EDQUOT; }

bool mentions_disk_full(std::string_view text) {
  return text.find("No space left on device") != std::string_view::npos ||
         text.find("Disk quota exceeded") != std::string_view::npos;
}

} // namespace bisectd::base
