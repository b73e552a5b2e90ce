#include "base/error.hpp"

namespace bisectd {

std::string_view to_string(ErrorCode code) {
  switch (code) {
  case ErrorCode::generic: return "error";
  case ErrorCode::invalid_input: return "invalid_input";
  case ErrorCode::invalid_config: return "invalid_config";
  case ErrorCode::not_found: return "not_found";
  case ErrorCode::conflict: return "conflict";
  case ErrorCode::io: return "io";
  case ErrorCode::timeout: return "timeout";
  case ErrorCode::unreachable: return "unreachable";
  case ErrorCode::build_failed: return "build_failed";
  case ErrorCode::boot_failed: return "boot_failed";
  case ErrorCode::benchmark_failed: return "benchmark_failed";
  case ErrorCode::infra: return "infra";
  case ErrorCode::cancelled: return "cancelled";
  }
  return "error";
}

} // namespace bisectd
