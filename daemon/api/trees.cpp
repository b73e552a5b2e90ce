// GET, POST and DELETE of trees.
#include "base/strings.hpp"
#include "daemon/api/body.hpp"
#include "daemon/api/page.hpp"
#include "daemon/api/resources.hpp"
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

// A tree and its job as the request describes them, every field checked; nothing is touched yet.
struct NewTree {
  storage::TreeRow tree;
  storage::JobRow job;
};

Status check_branches(const std::vector<std::string>& branches) {
  if (branches.empty()) {
    return make_error(ErrorCode::invalid_input, "branches: at least one branch is required");
  }
  for (const auto& b : branches) {
    if (!valid_branch(b)) {
      return make_error(ErrorCode::invalid_input, "branches: '" + b + "' is not a valid branch name");
    }
  }
  return {};
}

// Notify and Cc entries go into mail headers: each must be one address line (base::is_mail_address, the check
// bisectctl makes too); the error names the field and shows the entry with its control characters visible.
Status check_addresses(const std::vector<std::string>& addresses, const char* field) {
  for (const auto& address : addresses) {
    if (!base::is_mail_address(address)) {
      return make_error(ErrorCode::invalid_input, std::string(field) + ": '" +
                                                    base::escape_control(address, base::LineBreaks::escape) +
                                                    "' is not a mail address (one line with an '@')");
    }
  }
  return {};
}

// A job whose machine group has no machine would wait for ever: refused, naming the groups there are.
Status check_group(const ApiContext& c, const Job& job) {
  if (c.lab.machines_in(job.machine_group) > 0) {
    return {};
  }
  std::vector<std::string> groups;
  for (const auto& m : c.lab.machines()) {
    if (std::find(groups.begin(), groups.end(), m.group) == groups.end()) {
      groups.push_back(m.group);
    }
  }
  return make_error(ErrorCode::invalid_input, "job " + job.name + ": run.machine_group '" + job.machine_group +
                                                "' has no machine in this lab (groups: " + base::join(groups, ", ") +
                                                ")");
}

Result<NewTree> parse_tree(const ApiContext& c, const json& body) {
  NewTree t;
  auto& tree = t.tree;
  BISECTD_TRY_ASSIGN(tree.name, string_field(body, "name"));
  BISECTD_TRY_ASSIGN(tree.url, string_field(body, "url"));
  BISECTD_TRY_ASSIGN(tree.branches, string_list_field(body, "branches"));
  BISECTD_TRY_ASSIGN(tree.notify, string_list_field(body, "notify"));
  BISECTD_TRY_ASSIGN(tree.mail_cc, string_list_field(body, "mail_cc"));
  BISECTD_TRY_ASSIGN(tree.is_private, bool_field(body, "private", true)); // public only when asked for
  BISECTD_TRY_ASSIGN(tree.poll_interval_s, int_field(body, "poll_interval_s", c.poll_interval.count()));
  BISECTD_TRY_ASSIGN(auto job_path, string_field(body, "job_path", "job.yaml"));
  BISECTD_TRY_ASSIGN(auto job_yaml, string_field(body, "job_yaml"));
  if (!base::is_valid_name(tree.name)) {
    return make_error(ErrorCode::invalid_input,
                      "name: '" + tree.name + "' is not a valid tree name ([a-z0-9][a-z0-9._-]*)");
  }
  if (auto valid = vcs::validate_url(tree.url); !valid) {
    return make_error(ErrorCode::invalid_input, "url: " + valid.error().message);
  }
  BISECTD_TRY(check_branches(tree.branches));
  BISECTD_TRY(check_addresses(tree.notify, "notify"));
  BISECTD_TRY(check_addresses(tree.mail_cc, "mail_cc"));
  if (tree.poll_interval_s < 0 || tree.poll_interval_s > 7 * 24 * 3600) {
    return make_error(ErrorCode::invalid_input, "poll_interval_s: must be between 0 (the default) and a week");
  }
  BISECTD_TRY_ASSIGN(auto job, config::parse_job(job_yaml, job_path, c.configs_dir));
  BISECTD_TRY(check_group(c, job));
  tree.job = job.name;
  t.job = storage::JobRow{job.name, job_path, job.yaml, 0};
  return t;
}

// Jobs are shared by name: a different definition under a name another tree uses would change that tree's job.
Status check_job_name(ApiContext& c, const storage::JobRow& job, const std::string& changing_tree = "") {
  BISECTD_TRY_ASSIGN(auto existing, c.trees.job(job.name));
  if (!existing || existing->yaml == job.yaml) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto trees, c.trees.trees());
  for (const auto& other : trees) {
    if (other.job == job.name && other.name != changing_tree) {
      return make_error(ErrorCode::conflict, "job '" + job.name +
                                               "' exists with a different definition (used by tree '" + other.name +
                                               "'): give this job another name");
    }
  }
  return {};
}

// Mirrors and fetches the tree and checks its branches exist.
Status mirror_tree(ApiContext& c, const storage::TreeRow& tree, bool& fresh_mirror) {
  fresh_mirror = !std::filesystem::exists(c.repos.mirror_dir(tree.name));
  if (auto mirrored = c.repos.mirror(tree.name, tree.url); !mirrored) {
    return make_error(ErrorCode::invalid_input, "url: " + mirrored.error().message);
  }
  auto heads = c.repos.fetch(tree.name);
  for (const auto& b : tree.branches) {
    if (!heads || !heads->contains(b)) {
      return make_error(ErrorCode::invalid_input,
                        "branch: '" + b + "' not found in " + base::strip_url_userinfo(tree.url));
    }
  }
  return {};
}

// Claims the tree's name for one add (two adds of one name must not mirror one URL and store another).
Status claim_name(ApiContext& c, const NewTree& t) {
  std::lock_guard lock(c.tree_changes->lock);
  auto existing = c.trees.tree(t.tree.name);
  if ((existing && *existing) || c.tree_changes->adding.contains(t.tree.name)) {
    return make_error(ErrorCode::conflict, "tree '" + t.tree.name + "' exists already");
  }
  BISECTD_TRY(check_job_name(c, t.job));
  c.tree_changes->adding.insert(t.tree.name);
  return {};
}

// Mirrors the tree and stores it; a mirror made here is removed again on failure.
Status mirror_and_store(ApiContext& c, const NewTree& t) {
  bool fresh_mirror = false;
  auto added = mirror_tree(c, t.tree, fresh_mirror); // network I/O: no lock held
  if (added) {
    std::lock_guard lock(c.tree_changes->lock); // the job name again: a settings change may have taken it meanwhile
    added = check_job_name(c, t.job);
    if (added) {
      added = c.trees.add_tree(t.tree, t.job);
    }
  }
  if (!added && fresh_mirror) {
    std::error_code ignored;
    std::filesystem::remove_all(c.repos.mirror_dir(t.tree.name), ignored);
  }
  return added;
}

Status add_tree(ApiContext& c, const NewTree& t) {
  BISECTD_TRY(claim_name(c, t));
  auto added = mirror_and_store(c, t);
  std::lock_guard lock(c.tree_changes->lock);
  c.tree_changes->adding.erase(t.tree.name);
  return added;
}

} // namespace

HttpResponse get_trees(ApiContext& c, const Call& call) {
  auto page = parse_page(call.query, {});
  if (!page) {
    return error_response(page.error());
  }
  json next;
  auto out = page_of(
    c.trees.trees().value_or(std::vector<storage::TreeRow>{}), *page,
    [&](const auto& tree) { return tree.name > page->after; }, // by name
    [](const auto& tree) { return tree.name; }, [&](const auto& tree) { return tree_json(tree, c.trees); }, next);
  return json_response(200, {{"trees", out}, {"next", next}});
}

HttpResponse post_tree(ApiContext& c, const Call& call) {
  auto parsed = parse_tree(c, call.body);
  if (!parsed) {
    return error_response(parsed.error());
  }
  if (auto added = add_tree(c, *parsed); !added) {
    return error_response(added.error());
  }
  const auto& tree = parsed->tree;
  spdlog::info("tree {} added: {} ({}) job {}{}", tree.name, base::strip_url_userinfo(tree.url),
               base::join(tree.branches, ","), tree.job, tree.is_private ? "" : ", public");
  if (c.wake) {
    c.wake();
  }
  auto row = c.trees.tree(tree.name);
  return json_response(201, {{"tree", tree_json(**row, c.trees)}});
}

HttpResponse get_tree(ApiContext& c, const Call& call) {
  auto tree = c.trees.tree(call.params.at("name"));
  if (!tree) {
    return error_response(tree.error());
  }
  if (!*tree) {
    return error_response(404, "tree '" + call.params.at("name") + "' not found");
  }
  return json_response(200, {{"tree", tree_json(**tree, c.trees)}});
}

namespace {

// The tree with the request's changes applied (only the fields given), and its new job when one is given.
Result<std::pair<storage::TreeRow, std::optional<storage::JobRow>>> changed_tree(ApiContext& c, storage::TreeRow tree,
                                                                                 const json& body) {
  std::optional<storage::JobRow> job;
  if (body.contains("notify")) {
    BISECTD_TRY_ASSIGN(tree.notify, string_list_field(body, "notify"));
    BISECTD_TRY(check_addresses(tree.notify, "notify"));
  }
  if (body.contains("mail_cc")) {
    BISECTD_TRY_ASSIGN(tree.mail_cc, string_list_field(body, "mail_cc"));
    BISECTD_TRY(check_addresses(tree.mail_cc, "mail_cc"));
  }
  BISECTD_TRY_ASSIGN(tree.is_private, bool_field(body, "private", tree.is_private));
  BISECTD_TRY_ASSIGN(tree.poll_interval_s, int_field(body, "poll_interval_s", tree.poll_interval_s));
  if (body.contains("job_yaml")) {
    BISECTD_TRY_ASSIGN(auto yaml, string_field(body, "job_yaml"));
    BISECTD_TRY_ASSIGN(auto path, string_field(body, "job_path", "job.yaml"));
    BISECTD_TRY_ASSIGN(auto parsed, config::parse_job(yaml, path, c.configs_dir));
    BISECTD_TRY(check_group(c, parsed));
    job = storage::JobRow{parsed.name, path, parsed.yaml, 0};
    tree.job = parsed.name;
  }
  return std::pair{std::move(tree), std::move(job)};
}

} // namespace

HttpResponse post_tree_settings(ApiContext& c, const Call& call) {
  std::lock_guard lock(c.tree_changes->lock);
  auto tree = c.trees.tree(call.params.at("name"));
  if (!tree || !*tree) {
    return error_response(404, "tree '" + call.params.at("name") + "' not found");
  }
  auto changed = changed_tree(c, **tree, call.body);
  if (!changed) {
    return error_response(changed.error());
  }
  auto& [row, job] = *changed;
  if (job) {
    if (auto same_name = check_job_name(c, *job, row.name); !same_name) {
      return error_response(same_name.error());
    }
  }
  if (auto stored = c.trees.update_tree(row, job); !stored) {
    return error_response(stored.error());
  }
  spdlog::info("tree {} changed{}", row.name, job ? ": job " + job->name : "");
  return json_response(200, {{"tree", tree_json(row, c.trees)}});
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
