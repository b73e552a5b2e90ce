#pragma once
// A small blocking JSON-over-HTTP client for the bisectd API (libcurl easy interface).

#include "base/error.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bisectd::cli {

enum class HttpMethod { get, post, del };

struct HttpResponse {
  long status = 0;
  std::string body;
};

struct HttpOptions {
  std::chrono::milliseconds timeout{30'000}; // whole transfer
  std::chrono::milliseconds connect_timeout{5'000};
};

class HttpClient {
public:
  // `base_url` like "http://127.0.0.1:8765" (a trailing slash is dropped). `token`, when set, is sent
  // as "Authorization: Bearer <token>" with every request.
  HttpClient(std::string base_url, std::optional<std::string> token, HttpOptions options = {});

  // Performs one request; `path` starts with "/". Errors: ErrorCode::unreachable ("cannot reach
  // bisectd at URL: <curl message>"), timeout, cancelled (SIGINT). Any HTTP status is a response.
  Result<HttpResponse> request(HttpMethod method, std::string_view path,
                               const std::optional<nlohmann::json>& body = std::nullopt) const;

  // request() + JSON decoding. A non-2xx status becomes an Error carrying the server's "error"
  // field (404 -> not_found, 409 -> conflict, other -> generic; never invalid_input).
  Result<nlohmann::json> get_json(std::string_view path) const;
  // get_json of a list answer and of every page after it (the API's "next" cursor, docs/API.md), at most
  // `max_pages` requests: one reply whose `array_key` holds the items of all of them ("next" is null unless the
  // pages ran out first).
  Result<nlohmann::json> get_all_pages(std::string_view path, const std::string& array_key, int max_pages = 200) const;
  Result<nlohmann::json> post_json(std::string_view path, const nlohmann::json& body) const;
  Result<nlohmann::json> delete_json(std::string_view path) const;

  [[nodiscard]] const std::string& base_url() const { return m_base_url; }
  [[nodiscard]] bool has_token() const { return m_token.has_value(); }

private:
  Result<nlohmann::json> call_json(HttpMethod method, std::string_view path,
                                   const std::optional<nlohmann::json>& body) const;

  std::string m_base_url;
  std::optional<std::string> m_token;
  HttpOptions m_options;
};

// Percent-encodes `text` for a URL path segment or query value (RFC 3986 unreserved kept).
std::string url_encode(std::string_view text);

// "?a=1&b=x%20y" from the pairs whose value is non-empty; "" when none.
std::string query_string(const std::vector<std::pair<std::string, std::string>>& params);

// Turns a non-2xx response into an Error: the JSON "error" field when present, else
// "HTTP <status> from <what>: <start of body>".
Error http_error(const HttpResponse& response, std::string_view what);

} // namespace bisectd::cli
