#pragma once
// HTTP requests and responses as the API's handlers see them (no sockets here: http_server.hpp owns those).

#include "base/error.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace bisectd::daemon::api {

struct HttpRequest {
  std::string method; // GET, POST, DELETE
  std::string target; // path with query string
  std::string body;
  std::string authorization; // the Authorization header
};

struct HttpResponse {
  int status = 200;
  std::string body; // JSON
};

// `body` as the response; text that is not valid UTF-8 (a Latin-1 commit subject) is replaced, never an error.
HttpResponse json_response(int status, const nlohmann::json& body);
// {"error": message} with `status`.
HttpResponse error_response(int status, const std::string& message);
// The HTTP status for an error code (400 invalid input/config, 404 not found, 409 conflict, else 500).
int http_status(ErrorCode code);
// error_response(http_status(error.code), error.message).
HttpResponse error_response(const Error& error);

} // namespace bisectd::daemon::api
