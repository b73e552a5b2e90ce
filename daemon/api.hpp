#pragma once
// The HTTP API of docs/API.md as plain request → response functions (no sockets here, see http_server).
// Handlers run on a worker thread; they touch the store, the trees and the bisection driver's start().

#include "daemon/bisection_driver.hpp"
#include "daemon/context.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace bisectd::daemon {

struct HttpRequest {
  std::string method;          // GET, POST, DELETE
  std::string target;          // path with query string
  std::string body;
  std::string authorization;   // the Authorization header
};

struct HttpResponse {
  int status = 200;
  std::string body;            // JSON
};

class Api {
public:
  Api(Context& context, BisectionDriver& bisections, std::string token)
    : m_context(context), m_bisections(bisections), m_token(std::move(token)) {}

  // Never throws: a handler's exception becomes a 500 with a one-line error.
  HttpResponse handle(const HttpRequest& request);

private:
  HttpResponse route(const HttpRequest& request);
  HttpResponse add_tree(const nlohmann::json& body);
  HttpResponse remove_tree(const std::string& name);
  HttpResponse start_bisection(const nlohmann::json& body);
  HttpResponse status();
  HttpResponse trees();
  HttpResponse jobs();
  HttpResponse bisections(const std::map<std::string, std::string>& query);
  HttpResponse bisection(std::int64_t id);
  HttpResponse report(std::int64_t id);
  HttpResponse results(const std::string& commit, const std::map<std::string, std::string>& query);
  HttpResponse noise(const std::map<std::string, std::string>& query);
  nlohmann::json machines_json();

  Context& m_context;
  BisectionDriver& m_bisections;
  std::string m_token;
};

// {"error": message} with `status`.
HttpResponse error_response(int status, const std::string& message);
// The HTTP status for an error code (400 invalid input/config, 404 not found, 409 conflict, else 500).
int http_status(ErrorCode code);

} // namespace bisectd::daemon
