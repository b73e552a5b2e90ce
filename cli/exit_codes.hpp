#pragma once
// bisectctl's exit codes and how an Error maps onto them.
//
// Convention inside cli/: ErrorCode::invalid_input is reserved for errors in the command line itself
// (bad tree name, unsafe URL, bad --threshold) and gives exit 2 like a CLI11 parse error. Errors the
// daemon reports (HTTP 4xx/5xx) never use it, so a server-side "400 bad ref" exits 1.

#include "base/error.hpp"

#include <string>

namespace bisectd::cli {

enum class ExitCode : int {
  ok = 0,
  failure = 1,      // the command ran and failed (daemon error, not found, bisection not found)
  usage = 2,        // the command line was wrong
  interrupted = 130 // SIGINT
};

// Exit code for a failed command: invalid_input -> usage, cancelled -> interrupted, else failure.
ExitCode exit_code_for(const Error& error);

// The one line printed on stderr for `error`: "bisectctl: error: <message>".
std::string error_line(const Error& error);

// An ErrorCode::invalid_input error (exit 2) with `message`.
std::unexpected<Error> usage_error(std::string message);

} // namespace bisectd::cli
