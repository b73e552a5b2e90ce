#pragma once
// Owned file descriptors, closed exactly once whichever way the owner's scope is left, and the few operations on
// them that more than one place needs.

#include "base/error.hpp"

#include <filesystem>
#include <string_view>
#include <utility>

namespace bisectd::base {

class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(std::exchange(other.m_fd, -1));
    return *this;
  }
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return m_fd; }
  [[nodiscard]] bool valid() const { return m_fd >= 0; }
  void reset(int fd = -1);

private:
  int m_fd = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

// A pipe whose ends are closed on exec (a child gets only what it is handed).
Result<Pipe> make_pipe();

// Opens `path` for writing (created with `mode`, appended to or truncated), closed on exec.
Result<Fd> open_output(const std::filesystem::path& path, bool append, int mode = 0644);

// Opens `path` for reading, closed on exec (O_NOFOLLOW: a planted link is refused, not followed).
Result<Fd> open_input(const std::filesystem::path& path);

// Writes all of `data`, retrying short writes and EINTR. Error (io, the errno text) when the write fails; infra
// when the file system is full (ENOSPC, EDQUOT).
Status write_all(int fd, std::string_view data);

// True for the errno values of a full file system (ENOSPC, EDQUOT): our side's trouble, never a tree's verdict.
bool is_disk_full(int error_number);
// True when a tool's output says so (strerror's "No space left on device", "Disk quota exceeded").
bool mentions_disk_full(std::string_view text);

} // namespace bisectd::base
