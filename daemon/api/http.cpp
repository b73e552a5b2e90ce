#include "daemon/api/http.hpp"

namespace bisectd::daemon::api {

HttpResponse json_response(int status, const nlohmann::json& body) {
  return HttpResponse{status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, nlohmann::json{{"error", message}});
}

int http_status(ErrorCode code) {
  switch (code) {
  case ErrorCode::invalid_input:
  case ErrorCode::invalid_config: return 400;
  case ErrorCode::not_found: return 404;
  case ErrorCode::conflict: return 409;
  default: return 500;
  }
}

HttpResponse error_response(const Error& error) { return error_response(http_status(error.code), error.message); }

} // namespace bisectd::daemon::api
