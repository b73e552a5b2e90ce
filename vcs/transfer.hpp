#pragma once
// Clones and fetches of network remotes through a `git` child under a timeout (TransferLimits in
// vcs/repository.hpp says why not libgit2). Argv only; the child's process group is killed when it runs too long.

#include "base/process.hpp"
#include "vcs/repository.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace bisectd::vcs {

// The command running `git <git_args>` against a network remote: no prompts (GIT_TERMINAL_PROMPT=0, ssh in batch
// mode), no automatic gc (libgit2 readers share the mirror), an http(s) transfer below 1 KiB/s for a minute and an
// ssh server silent for a minute given up on (both shortened to limits.timeout), killed after limits.timeout.
base::Command transfer_command(const std::vector<std::string>& git_args, const TransferLimits& limits);

// The outcome of a transfer that ended as `exit`, for errors starting with `what` ("fetch URL"): ok; a timeout
// (ErrorCode::timeout, "WHAT: timed out after 30s"); or a failure (ErrorCode::unreachable) quoting git's last
// stderr line, control characters escaped and cut to 300 characters (the remote writes part of it).
Status transfer_outcome(const base::ExitStatus& exit, const TransferLimits& limits, std::string_view what);

// transfer_command + base::run + transfer_outcome.
Status run_transfer(const std::vector<std::string>& git_args, const TransferLimits& limits, std::string_view what);

// `text` with control characters (and DEL) written as \xNN: one printable line.
std::string escape_control(std::string_view text);

} // namespace bisectd::vcs
