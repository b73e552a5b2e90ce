#pragma once
// The HTTP API of docs/API.md as plain request → response functions: a route table (api.cpp) over one file per
// resource. Handlers run on a worker thread.

#include "daemon/api/http.hpp"
#include "daemon/api/resources.hpp"

#include <string>

namespace bisectd::daemon::api {

class Api {
public:
  Api(ApiContext context, std::string token) : m_context(std::move(context)), m_token(std::move(token)) {}

  // Never throws: a field of the wrong type is a 400, any other exception a 500, each with a one-line error.
  HttpResponse handle(const HttpRequest& request);
  // True when `authorization` carries the token ("Bearer <token>"), compared in constant time.
  [[nodiscard]] bool authorized(const std::string& authorization) const;
  // True for LAVA's notify callback (POST /lava/notify/ID) carrying the configured callback secret (lava.cpp).
  [[nodiscard]] bool lava_callback_authorized(const std::string& target, const std::string& authorization) const;

private:
  HttpResponse route(const HttpRequest& request);

  ApiContext m_context;
  std::string m_token;
};

} // namespace bisectd::daemon::api
