// Network clones and fetches through a `git` child: every way a remote can stall ends at a bound.
#include "vcs/transfer.hpp"

#include "base/strings.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace bisectd::vcs {

namespace {

constexpr std::int64_t k_stall_seconds = 60;     // http under 1 KiB/s, or ssh silent, this long
constexpr std::int64_t k_connect_seconds = 30;   // ssh's TCP connect and handshake
constexpr std::size_t k_quoted_stderr = 300;     // characters of git's last stderr line in an error
constexpr std::size_t k_stderr_kept = 64 * 1024; // what a chatty remote can make us hold

// The last non-empty line of git's stderr (progress lines end in '\r').
std::string_view last_line(std::string_view text) {
  std::string_view last;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find_first_of("\r\n", start);
    auto line = base::trim(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (!line.empty()) {
      last = line;
    }
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }
  return last;
}

} // namespace

std::string escape_control(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      std::array<char, 8> hex{};
      std::snprintf(hex.data(), hex.size(), "\\x%02x", u);
      out += hex.data();
    } else {
      out += c;
    }
  }
  return out;
}

base::Command transfer_command(const std::vector<std::string>& git_args, const TransferLimits& limits) {
  auto total = std::max<std::int64_t>(limits.timeout.count(), 1);
  auto stall = std::min(total, k_stall_seconds);
  auto connect = std::min(total, k_connect_seconds);
  auto alive = std::max<std::int64_t>(stall / 4, 1);
  base::Command command;
  command.argv = {"git"};
  for (const std::string& setting :
       {std::string("gc.auto=0"), std::string("maintenance.auto=false"), std::string("http.lowSpeedLimit=1024"),
        "http.lowSpeedTime=" + std::to_string(stall)}) {
    command.argv.insert(command.argv.end(), {"-c", setting});
  }
  command.argv.insert(command.argv.end(), git_args.begin(), git_args.end());
  // git runs GIT_SSH_COMMAND through a shell: it is made of fixed words and numbers only.
  command.env = {{"GIT_TERMINAL_PROMPT", "0"},
                 {"GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=" + std::to_string(connect) +
                                       " -o ServerAliveInterval=" + std::to_string(alive) +
                                       " -o ServerAliveCountMax=4"},
                 {"LC_ALL", "C"}};
  command.timeout = std::chrono::seconds(total);
  command.cancel = limits.cancel;
  command.capture_limit = k_stderr_kept;
  return command;
}

Status transfer_outcome(const base::ExitStatus& exit, const TransferLimits& limits, std::string_view what) {
  if (exit.timed_out) {
    return make_error(ErrorCode::timeout,
                      std::string(what) + ": timed out after " + std::to_string(limits.timeout.count()) + "s");
  }
  if (exit.ok()) {
    return {};
  }
  auto line = escape_control(last_line(exit.err));
  if (line.size() > k_quoted_stderr) {
    line = line.substr(0, k_quoted_stderr) + "...";
  }
  return make_error(ErrorCode::unreachable,
                    std::string(what) + ": git " + exit.describe() + (line.empty() ? "" : ": " + line));
}

Status run_transfer(const std::vector<std::string>& git_args, const TransferLimits& limits, std::string_view what) {
  auto exit = base::run(transfer_command(git_args, limits));
  if (!exit) {
    return std::unexpected(exit.error().context(what));
  }
  return transfer_outcome(*exit, limits, what);
}

} // namespace bisectd::vcs
