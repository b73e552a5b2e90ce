// The route table, authentication and dispatch of the HTTP API.
#include "base/strings.hpp"
#include "daemon/api/api.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bisectd::daemon::api {

namespace {

constexpr Route<ApiContext> k_routes[] = {
  {"GET", "/api/v1/status", &get_status},
  {"GET", "/api/v1/machines", &get_machines},
  {"POST", "/api/v1/machines/{name}/release", &post_machine_release},
  {"POST", "/api/v1/machines/{name}/check", &post_machine_check},
  {"GET", "/api/v1/jobs", &get_jobs},
  {"GET", "/api/v1/trees", &get_trees},
  {"POST", "/api/v1/trees", &post_tree},
  {"GET", "/api/v1/trees/{name}", &get_tree},
  {"POST", "/api/v1/trees/{name}", &post_tree_settings},
  {"DELETE", "/api/v1/trees/{name}", &delete_tree},
  {"GET", "/api/v1/bisections", &get_bisections},
  {"POST", "/api/v1/bisections", &post_bisection},
  {"GET", "/api/v1/bisections/{id}", &get_bisection},
  {"DELETE", "/api/v1/bisections/{id}", &delete_bisection},
  {"GET", "/api/v1/bisections/{id}/report", &get_report},
  {"POST", "/api/v1/bisections/{id}/cancel", &cancel_bisection},
  {"POST", "/api/v1/bisections/{id}/retry", &retry_bisection},
  {"GET", "/api/v1/detections", &get_detections},
  {"GET", "/api/v1/logs/{kind}/{id}", &get_log},
  {"GET", "/api/v1/logs/build", &get_commit_build_log}, // ?tree=T&commit=REV[&job=J]: by what the user knows
  {"GET", "/api/v1/queue", &get_queue},
  {"GET", "/api/v1/results/{commit}", &get_results},
  {"POST", "/api/v1/commits/{commit}/clear", &post_commit_clear},
  {"GET", "/api/v1/noise", &get_noise},
  {"GET", "/api/v1/compare", &get_compare},
  {"POST", "/lava/notify/{id}", &post_lava_notify},
  {"GET", "/lava/artifacts/{secret}/{file}", &get_lava_artifact},
};

bool is_number(const std::string& text) {
  return !text.empty() && text.size() <= 18 && std::all_of(text.begin(), text.end(), ::isdigit);
}

} // namespace

bool Api::authorized(const std::string& authorization) const {
  return !m_token.empty() && base::same_secret("Bearer " + m_token, authorization);
}

HttpResponse Api::handle(const HttpRequest& request) {
  try {
    return route(request);
  } catch (const nlohmann::json::exception& e) {
    return error_response(400, std::string("request body: ") + e.what());
  } catch (const std::exception& e) {
    spdlog::error("api {} {}: {}", request.method, request.target, e.what());
    return error_response(500, std::string("internal error: ") + e.what());
  }
}

HttpResponse Api::route(const HttpRequest& request) {
  auto question = request.target.find('?');
  auto path = request.target.substr(0, question);
  // Every method but GET writes and needs the token, whatever the path.
  if (request.method != "GET" && !authorized(request.authorization) &&
      !lava_callback_authorized(path, request.authorization)) {
    return error_response(401, "a valid token is required for " + request.method + " (Authorization: Bearer ...)");
  }
  // Reads are open, but logs carry what a tree's code printed (a build can print any file it could read): they
  // need the token unless the config opens them (public_reads: true).
  if (request.method == "GET" && path.starts_with("/api/v1/logs/") && !m_context.public_reads &&
      !authorized(request.authorization)) {
    return error_response(401, "a valid token is required to read logs (Authorization: Bearer ...; the daemon's "
                               "public_reads: true opens them)");
  }
  Call call;
  call.query = parse_query(question == std::string::npos ? "" : request.target.substr(question + 1));
  for (const auto& route : k_routes) {
    if (route.method != request.method || !match_path(route.pattern, path, call.params)) {
      continue;
    }
    if (call.params.contains("id") && !is_number(call.params["id"])) {
      return error_response(400, "id must be a number, not '" + call.params["id"] + "'");
    }
    if (request.method == "POST") {
      // No body is an empty object: the actions (cancel, retry, release) take no fields.
      call.body = request.body.empty() ? nlohmann::json::object() : nlohmann::json::parse(request.body, nullptr, false);
      if (call.body.is_discarded() || !call.body.is_object()) {
        return error_response(400, "the request body must be a JSON object");
      }
    }
    return route.handler(m_context, call);
  }
  return error_response(404, "no such endpoint: " + (request.method == "GET" ? "" : request.method + " ") + path);
}

} // namespace bisectd::daemon::api
