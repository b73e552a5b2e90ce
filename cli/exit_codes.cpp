#include "cli/exit_codes.hpp"

#include "base/strings.hpp"

namespace bisectd::cli {

ExitCode exit_code_for(const Error& error) {
  switch (error.code) {
  case ErrorCode::invalid_input: return ExitCode::usage;
  case ErrorCode::cancelled: return ExitCode::interrupted;
  default: return ExitCode::failure;
  }
}

std::string error_line(const Error& error) {
  std::string message = error.message;
  // Keep the promise of one line even when a server or file puts newlines into a message.
  for (char& c : message) {
    if (c == '\n' || c == '\r' || c == '\t') {
      c = ' ';
    }
  }
  // And of no terminal escapes: a daemon's error can quote a tree's text (a subject, a build's last line).
  return "bisectctl: error: " + base::escape_control(message, base::LineBreaks::escape);
}

std::unexpected<Error> usage_error(std::string message) {
  return make_error(ErrorCode::invalid_input, std::move(message));
}

} // namespace bisectd::cli
