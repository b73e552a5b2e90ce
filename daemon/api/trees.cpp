// GET, POST and DELETE of trees.
#include "daemon/api/resources.hpp"

#include "base/strings.hpp"
#include "daemon/api/views.hpp"
#include "daemon/config/job_file.hpp"
#include "vcs/repository.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

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

} // namespace

HttpResponse get_trees(ApiContext& c, const Call&) {
  json out = json::array();
  for (const auto& tree : c.trees.trees().value_or(std::vector<storage::TreeRow>{})) {
    out.push_back(tree_json(tree, c.trees));
  }
  return json_response(200, {{"trees", out}});
}

HttpResponse post_tree(ApiContext& c, const Call& call) {
  const auto& body = call.body;
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
  auto job = config::parse_job(body.value("job_yaml", ""), job_path, c.configs_dir);
  if (!job) {
    return error_response(400, job.error().message);
  }
  if (auto existing = c.trees.tree(name); existing && *existing) {
    return error_response(409, "tree '" + name + "' exists already");
  }
  bool fresh_mirror = !std::filesystem::exists(c.repos.mirror_dir(name));
  auto cleanup = [&] {
    if (fresh_mirror) {
      std::filesystem::remove_all(c.repos.mirror_dir(name));
    }
  };
  if (auto mirrored = c.repos.mirror(name, url); !mirrored) {
    cleanup();
    return error_response(400, "url: " + mirrored.error().message);
  }
  auto heads = c.repos.fetch(name);
  for (const auto& b : branches) {
    if (!heads || !heads->contains(b)) {
      cleanup();
      return error_response(400, "branch: '" + b + "' not found in " + url);
    }
  }
  storage::TreeRow tree;
  tree.name = name;
  tree.url = url;
  tree.branches = branches;
  tree.job = job->name;
  tree.notify = string_list(body, "notify");
  tree.mail_cc = string_list(body, "mail_cc");
  tree.is_private = body.value("private", false);
  tree.poll_interval_s = body.value("poll_interval_s", c.poll_interval.count());
  auto stored = c.trees.add_tree(tree, storage::JobRow{job->name, job_path.string(), job->yaml, 0});
  if (!stored) {
    cleanup();
    return error_response(stored.error());
  }
  spdlog::info("tree {} added: {} ({}) job {}", name, url, base::join(branches, ","), job->name);
  if (c.wake) {
    c.wake();
  }
  auto row = c.trees.tree(name);
  return json_response(201, {{"tree", tree_json(**row, c.trees)}});
}

HttpResponse delete_tree(ApiContext& c, const Call& call) {
  const auto& name = call.params.at("name");
  auto removed = c.trees.remove_tree(name);
  if (!removed) {
    return error_response(removed.error());
  }
  spdlog::info("tree {} removed", name);
  return json_response(200, {{"removed", name}});
}

} // namespace bisectd::daemon::api
