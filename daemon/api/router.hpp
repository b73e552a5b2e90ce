#pragma once
// The API's route table: each route is a method, a path pattern ("/api/v1/bisections/{id}/report") and a handler.
// Matching, path parameters and the query string are parsed here, once.

#include "daemon/api/http.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::daemon::api {

// What a handler gets: the path's {parameters}, the decoded query string and (for POST) the JSON body.
struct Call {
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> query;
  nlohmann::json body;

  // The query value of `key`, or empty.
  [[nodiscard]] std::string query_or(const std::string& key, const std::string& fallback = "") const;
};

template <class Context> struct Route {
  std::string_view method;  // GET reads; every other method writes and needs the token
  std::string_view pattern; // "/api/v1/bisections/{id}"
  HttpResponse (*handler)(Context& context, const Call& call);
};

// "%41+b" -> "A b".
std::string url_decode(std::string_view text);
// "a=1&b=x%20y" -> {a: 1, b: "x y"}.
std::map<std::string, std::string> parse_query(std::string_view query);
// Matches `path` against `pattern`'s segments; fills `params` for {name} segments.
bool match_path(std::string_view pattern, std::string_view path, std::map<std::string, std::string>& params);

} // namespace bisectd::daemon::api
