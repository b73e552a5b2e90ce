// A commit's flags: what `results` shows with their reasons, why `show` lists a commit as skipped, and
// POST /api/v1/commits/{commit}/clear, which drops them.
#include "base/strings.hpp"
#include "daemon/api/body.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"
#include "daemon/core/requests.hpp"

#include <spdlog/spdlog.h>

#include <map>

namespace bisectd::daemon::api {

using nlohmann::json;
using storage::CommitFlags;

namespace {

// The current definition of each job asked for ("" for a job that is gone or no longer parses: none of its flags
// applies).
class Definitions {
public:
  explicit Definitions(JobCatalog& jobs) : m_jobs(jobs) {}
  const std::string& of(const std::string& job) {
    auto [it, added] = m_known.try_emplace(job);
    if (added) {
      if (auto found = m_jobs.get(job)) {
        it->second = job_definition(**found);
      }
    }
    return it->second;
  }

private:
  JobCatalog& m_jobs;
  std::map<std::string, std::string> m_known;
};

// What the flag does now, in words.
std::string effect(const storage::FlagRow& row, bool current) {
  if (!current) {
    return "ignored: raised under an earlier definition of the job";
  }
  auto needed = CommitFlags::failures_to_skip(row.flag);
  if (row.count >= needed) {
    return "skips the commit";
  }
  return "failed " + std::to_string(row.count) + " of " + std::to_string(needed) +
         " times: tried again before it skips the commit";
}

} // namespace

json commit_flags_json(ApiContext& c, const std::vector<storage::FlagRow>& rows) {
  Definitions definitions(c.jobs);
  json out = json::array();
  for (const auto& row : rows) {
    bool current = !row.key.definition.empty() && row.key.definition == definitions.of(row.key.job);
    out.push_back({{"commit", row.key.commit},
                   {"job", row.key.job},
                   {"definition", row.key.definition},
                   {"variant", row.key.variant},
                   {"flag", to_string(row.flag)},
                   {"count", row.count},
                   {"reason", row.message},
                   {"current", current},
                   {"skips", current && row.count >= CommitFlags::failures_to_skip(row.flag)},
                   {"effect", effect(row, current)},
                   {"updated_at", iso_or_null(row.updated_at)}});
  }
  return out;
}

std::string skipped_because(ApiContext& c, const storage::FlagKey& key) {
  std::vector<std::string> why;
  for (const auto& row : c.samples.commit_flags(key.commit).value_or(std::vector<storage::FlagRow>{})) {
    bool same = row.key.commit == key.commit && row.key.job == key.job && row.key.definition == key.definition &&
                row.key.variant == key.variant;
    if (same && row.count >= CommitFlags::failures_to_skip(row.flag)) {
      why.push_back(std::string(to_string(row.flag)) + " (" + std::to_string(row.count) +
                    (row.count == 1 ? " failure): " : " failures): ") + row.message);
    }
  }
  return base::join(why, "; ");
}

HttpResponse post_commit_clear(ApiContext& c, const Call& call) {
  auto tree = string_field(call.body, "tree");
  auto job_name = string_field(call.body, "job");
  if (!tree || !job_name) {
    return error_response(!tree ? tree.error() : job_name.error());
  }
  if (tree->empty()) {
    return error_response(400, "tree: required (the commit is resolved in that tree's mirror)");
  }
  auto sha = resolve_commit(c, *tree, call.params.at("commit"));
  if (!sha) {
    return error_response(sha.error());
  }
  if (!job_name->empty() && !c.jobs.get(*job_name)) {
    return error_response(404, "job: '" + *job_name + "' not found");
  }
  if (job_name->empty()) { // the tree's job, as `bisect start` takes it
    auto row = c.trees.tree(*tree);
    if (!row || !*row) {
      return error_response(404, "tree: '" + *tree + "' not found");
    }
    *job_name = (*row)->job;
  }
  auto cleared = c.samples.clear_flags(*job_name, *sha);
  if (!cleared) {
    return error_response(500, cleared.error().message);
  }
  spdlog::info("commit {} of tree {}: {} flag(s) of job {} cleared by the operator", base::short_sha(*sha), *tree,
               *cleared, *job_name);
  if (c.wake) {
    c.wake();
  }
  return json_response(200, {{"commit", *sha}, {"tree", *tree}, {"job", *job_name}, {"cleared", *cleared}});
}

} // namespace bisectd::daemon::api
