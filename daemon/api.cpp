// Routing, authentication and the write endpoints of the HTTP API.
#include "daemon/api.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "daemon/api_views.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::daemon {

using nlohmann::json;

namespace {

std::map<std::string, std::string> parse_query(std::string_view query) {
  std::map<std::string, std::string> out;
  for (const auto& part : base::split(query, '&')) {
    auto eq = part.find('=');
    if (!part.empty()) {
      out[part.substr(0, eq)] = eq == std::string::npos ? "" : url_decode(part.substr(eq + 1));
    }
  }
  return out;
}

HttpResponse ok(int status, const json& body) { return HttpResponse{status, body.dump()}; }

bool valid_branch(const std::string& branch) {
  if (branch.empty() || branch.size() > 200 || branch.front() == '-' || branch.find("..") != std::string::npos) {
    return false;
  }
  return std::all_of(branch.begin(), branch.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-' || c == '/';
  });
}

std::vector<std::string> string_list(const json& body, const char* key) {
  std::vector<std::string> out;
  if (body.contains(key) && body[key].is_array()) {
    for (const auto& item : body[key]) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

std::optional<std::int64_t> parse_id(const std::string& text) {
  if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), ::isdigit)) {
    return std::nullopt;
  }
  return std::stoll(text);
}

} // namespace

HttpResponse error_response(int status, const std::string& message) {
  return HttpResponse{status, json{{"error", message}}.dump()};
}

int http_status(ErrorCode code) {
  switch (code) {
  case ErrorCode::invalid_input:
  case ErrorCode::invalid_config:
    return 400;
  case ErrorCode::not_found:
    return 404;
  case ErrorCode::conflict:
    return 409;
  default:
    return 500;
  }
}

HttpResponse Api::handle(const HttpRequest& request) {
  try {
    return route(request);
  } catch (const std::exception& e) {
    spdlog::error("api {} {}: {}", request.method, request.target, e.what());
    return error_response(500, std::string("internal error: ") + e.what());
  }
}

HttpResponse Api::route(const HttpRequest& request) {
  auto question = request.target.find('?');
  auto path = request.target.substr(0, question);
  auto query = parse_query(question == std::string::npos ? "" : request.target.substr(question + 1));
  auto parts = base::split(path, '/'); // "", "api", "v1", ...
  if (parts.size() < 4 || parts[1] != "api" || parts[2] != "v1") {
    return error_response(404, "no such endpoint: " + path);
  }
  const auto& noun = parts[3];
  if (request.method != "GET") {
    if (m_token.empty() || request.authorization != "Bearer " + m_token) {
      return error_response(401, "a valid token is required for " + request.method + " (Authorization: Bearer ...)");
    }
    if (request.method == "DELETE" && noun == "trees" && parts.size() == 5) {
      return remove_tree(parts[4]);
    }
    auto body = json::parse(request.body, nullptr, false);
    if (request.method == "POST" && (body.is_discarded() || !body.is_object())) {
      return error_response(400, "the request body must be a JSON object");
    }
    if (request.method == "POST" && noun == "trees" && parts.size() == 4) {
      return add_tree(body);
    }
    if (request.method == "POST" && noun == "bisections" && parts.size() == 4) {
      return start_bisection(body);
    }
    return error_response(404, "no such endpoint: " + request.method + " " + path);
  }
  if (noun == "status") {
    return status();
  }
  if (noun == "machines") {
    return ok(200, json{{"machines", machines_json()}});
  }
  if (noun == "trees") {
    return trees();
  }
  if (noun == "jobs") {
    return jobs();
  }
  if (noun == "noise") {
    return noise(query);
  }
  if (noun == "results" && parts.size() == 5) {
    return results(parts[4], query);
  }
  if (noun == "bisections" && parts.size() == 4) {
    return bisections(query);
  }
  if (noun == "bisections" && parts.size() >= 5) {
    auto id = parse_id(parts[4]);
    if (!id) {
      return error_response(400, "bisection id must be a number, not '" + parts[4] + "'");
    }
    if (parts.size() == 5) {
      return bisection(*id);
    }
    if (parts.size() == 6 && parts[5] == "report") {
      return report(*id);
    }
  }
  return error_response(404, "no such endpoint: " + path);
}

HttpResponse Api::add_tree(const json& body) {
  auto name = body.value("name", "");
  auto url = body.value("url", "");
  auto branches = string_list(body, "branches");
  if (!base::is_valid_name(name)) {
    return error_response(400, "name: '" + name + "' is not a valid tree name ([a-z0-9][a-z0-9._-]*)");
  }
  if (auto valid = vcs::validate_url(url); !valid) {
    return error_response(400, "url: " + valid.error().message);
  }
  if (branches.empty()) {
    return error_response(400, "branches: at least one branch is required");
  }
  for (const auto& b : branches) {
    if (!valid_branch(b)) {
      return error_response(400, "branches: '" + b + "' is not a valid branch name");
    }
  }
  auto job_path = std::filesystem::path(body.value("job_path", "job.yaml"));
  auto job = parse_job(body.value("job_yaml", ""), job_path, m_context.config.configs_dir);
  if (!job) {
    return error_response(400, job.error().message);
  }
  if (auto existing = m_context.store->tree(name); existing && *existing) {
    return error_response(409, "tree '" + name + "' exists already");
  }
  bool fresh_mirror = !std::filesystem::exists(m_context.trees->mirror_dir(name));
  auto cleanup = [&] {
    if (fresh_mirror) {
      std::filesystem::remove_all(m_context.trees->mirror_dir(name));
    }
  };
  if (auto mirrored = m_context.trees->mirror(name, url); !mirrored) {
    cleanup();
    return error_response(400, "url: " + mirrored.error().message);
  }
  auto heads = m_context.trees->fetch(name);
  for (const auto& b : branches) {
    if (!heads || !heads->contains(b)) {
      cleanup();
      return error_response(400, "branch: '" + b + "' not found in " + url);
    }
  }
  storage::TreeRow tree;
  tree.name = name;
  tree.url = url;
  tree.branches_json = json(branches).dump();
  tree.job = job->name;
  tree.notify_json = json(string_list(body, "notify")).dump();
  tree.mail_cc_json = json(string_list(body, "mail_cc")).dump();
  tree.is_private = body.value("private", false);
  tree.poll_interval_s = body.value("poll_interval_s", m_context.config.poll_interval.count());
  auto stored = m_context.store->add_tree(tree, storage::JobRow{job->name, job_path.string(), job->yaml, 0});
  if (!stored) {
    cleanup();
    return error_response(http_status(stored.error().code), stored.error().message);
  }
  spdlog::info("tree {} added: {} ({}) job {}", name, url, base::join(branches, ","), job->name);
  if (m_context.wake) {
    m_context.wake();
  }
  auto row = m_context.store->tree(name);
  return ok(201, json{{"tree", tree_json(**row, *m_context.store)}});
}

HttpResponse Api::remove_tree(const std::string& name) {
  auto removed = m_context.store->remove_tree(name);
  if (!removed) {
    return error_response(http_status(removed.error().code), removed.error().message);
  }
  spdlog::info("tree {} removed", name);
  return ok(200, json{{"removed", name}});
}

HttpResponse Api::start_bisection(const json& body) {
  auto tree_name = body.value("tree", "");
  auto tree = m_context.store->tree(tree_name);
  if (!tree || !*tree) {
    return error_response(404, "tree: '" + tree_name + "' not found");
  }
  auto good = body.value("good", "");
  auto bad = body.value("bad", "");
  if (good.empty() || bad.empty()) {
    return error_response(400, good.empty() ? "good: missing" : "bad: missing");
  }
  auto job = body.value("job", (*tree)->job);
  if (job.empty()) {
    job = (*tree)->job;
  }
  auto branches = json::parse((*tree)->branches_json, nullptr, false);
  std::string branch = branches.is_array() && !branches.empty() ? branches[0].get<std::string>() : "";
  auto id = m_bisections.start(tree_name, branch, good, bad, job, "manual");
  if (!id) {
    return error_response(http_status(id.error().code), id.error().message);
  }
  return ok(201, json{{"id", *id}});
}

} // namespace bisectd::daemon
