#pragma once
// An exclusive lock on a directory, held as long as the object lives: two daemons on one data dir would both
// claim requests and both deliver the outbox, so the second one refuses to start.

#include "base/error.hpp"
#include "base/fd.hpp"

#include <filesystem>

namespace bisectd::base {

class DirLock {
public:
  // Locks `dir`/`name` (flock, non-blocking) and writes this process's pid into it. Error (conflict) when another
  // process holds it, naming that process's pid.
  static Result<DirLock> acquire(const std::filesystem::path& dir, const std::string& name = "bisectd.lock");

private:
  explicit DirLock(Fd fd) : m_fd(std::move(fd)) {}
  Fd m_fd; // closing it releases the flock
};

} // namespace bisectd::base
