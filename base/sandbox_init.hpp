#pragma once
// The process bwrap starts inside its pid namespace (with --as-pid-1, the step's command itself). Killing bwrap
// does not wait for it: bwrap's parent-death signal reaches it later, and a starved process (SCHED_IDLE prebuilds on
// a loaded host) may go on writing into the worktree for seconds after the next step took it. Holding a pidfd of
// it, a caller can kill it and wait until it is gone; as the namespace's init, it is gone only once every other
// process of the namespace is.

#include "base/fd.hpp"

#include <chrono>
#include <sys/types.h>

namespace bisectd::base {

// The fd number bwrap writes its {"child-pid": N} to (`--info-fd`), in the child's fd table.
inline constexpr int k_sandbox_info_fd = 3;

// Reads bwrap's info from `info` (what is there, and what comes within `bound`) and opens a pidfd of the child it
// names, when that child is still `bwrap_pid`'s own (so never another process that reused the pid): call it before
// killing bwrap. Invalid Fd when bwrap has said nothing yet.
Fd open_sandbox_init(const Fd& info, pid_t bwrap_pid, std::chrono::milliseconds bound);

// SIGKILLs the process behind `pidfd` and waits, at most `bound`, until it has exited. No-op on an invalid Fd.
void kill_sandbox_init(const Fd& pidfd, std::chrono::milliseconds bound);

} // namespace bisectd::base
