#include "cli/exit_codes.hpp"

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
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return "bisectctl: error: " + message;
}

std::unexpected<Error> usage_error(std::string message) {
  return make_error(ErrorCode::invalid_input, std::move(message));
}

} // namespace bisectd::cli
