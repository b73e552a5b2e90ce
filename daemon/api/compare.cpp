// GET /api/v1/compare?a=COMMIT&b=COMMIT[&job=NAME][&tree=NAME][&all=1]: the report's LKP table for any two
// measured commits of a job, with the report's significance rule.
#include "base/strings.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"
#include "report/change_table.hpp"
#include "report/comparison.hpp"

#include <algorithm>
#include <set>

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

// One side of the comparison: the commit as given, its full sha and its normal-build samples.
struct Side {
  std::string key, given, sha, tree;
  std::vector<storage::SampleRow> samples;
};

bool is_hex_prefix(const std::string& text) {
  return text.size() >= 7 && text.size() <= 40 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The samples of the one commit `side.given` names (a sha prefix, or a ref with `tree`).
Status load_side(ApiContext& c, const std::string& tree, Side& side) {
  if (side.given.empty()) {
    return make_error(ErrorCode::invalid_input, side.key + ": missing (a sha of 7+ hex digits, or a ref with tree=)");
  }
  std::string prefix = side.given;
  if (!is_hex_prefix(prefix)) {
    if (tree.empty()) {
      return make_error(ErrorCode::invalid_input,
                        side.key + ": '" + side.given + "' is not a sha (at least 7 hex digits); a ref needs tree=");
    }
    BISECTD_TRY_ASSIGN(prefix, resolve_commit(c, tree, side.given));
  }
  BISECTD_TRY_ASSIGN(auto rows, c.samples.samples_for_commit_prefix(prefix, tree, 0, storage::k_all_samples));
  std::set<std::string> commits;
  for (auto& s : rows) {
    if (s.variant.empty()) { // verification builds (reverts, forced alignment) are other binaries
      commits.insert(s.commit);
      side.tree = s.tree;
      side.samples.push_back(std::move(s));
    }
  }
  if (commits.empty()) {
    return make_error(ErrorCode::not_found, side.key + ": commit '" + side.given + "' was not measured" +
                                              (tree.empty() ? "" : " in tree " + tree));
  }
  if (commits.size() > 1) {
    return make_error(ErrorCode::invalid_input, side.key + ": '" + side.given + "' is ambiguous: " +
                                                  std::to_string(commits.size()) + " measured commits start with it");
  }
  side.sha = *commits.begin();
  return {};
}

std::set<std::string> jobs_of(const Side& side) {
  std::set<std::string> jobs;
  for (const auto& s : side.samples) {
    jobs.insert(s.job);
  }
  return jobs;
}

// The job both commits were measured with: `asked`, or the only one they share.
Result<std::string> common_job(const Side& a, const Side& b, const std::string& asked) {
  auto ja = jobs_of(a), jb = jobs_of(b);
  std::vector<std::string> both;
  for (const auto& job : ja) {
    if (jb.contains(job)) {
      both.push_back(job);
    }
  }
  auto list = [](const auto& jobs) {
    return jobs.empty() ? std::string("none") : base::join(std::vector<std::string>(jobs.begin(), jobs.end()), ", ");
  };
  if (!asked.empty()) {
    if (std::find(both.begin(), both.end(), asked) == both.end()) {
      return make_error(ErrorCode::not_found, "job: '" + asked + "' did not measure both commits (a: " + list(ja) +
                                                "; b: " + list(jb) + ")");
    }
    return asked;
  }
  if (both.empty()) {
    return make_error(ErrorCode::not_found,
                      "no job measured both commits (a: " + list(ja) + "; b: " + list(jb) + ")");
  }
  if (both.size() > 1) {
    return make_error(ErrorCode::invalid_input,
                      "several jobs measured both commits (" + list(both) + "): name one with job=");
  }
  return both.front();
}

std::vector<report::RunMetrics> runs_of(const Side& side, const std::string& job) {
  std::vector<report::RunMetrics> runs;
  for (const auto& s : side.samples) {
    if (s.job == job) {
      runs.push_back(s.metrics);
    }
  }
  return runs;
}

report::Commit commit_of(ApiContext& c, const Side& side) {
  report::Commit commit;
  commit.sha = side.sha;
  (void)c.repos.with_repo(side.tree, [&](vcs::Repo& repo) -> Status {
    if (auto info = repo.commit(side.sha)) {
      commit.subject = info->subject;
    }
    return {};
  });
  return commit;
}

json row_json(const report::MetricComparison& m) {
  auto stddev_pct = [](const std::vector<double>& samples) {
    double mean = report::mean(samples);
    return mean == 0 ? 0.0 : 100.0 * report::population_stddev(samples) / mean;
  };
  return json{{"name", m.name},
              {"a_mean", report::mean(m.parent_samples)},
              {"a_stddev_pct", stddev_pct(m.parent_samples)},
              {"a_runs", m.parent_samples.size()},
              {"b_mean", report::mean(m.culprit_samples)},
              {"b_stddev_pct", stddev_pct(m.culprit_samples)},
              {"b_runs", m.culprit_samples.size()},
              {"change", report::table_change(m)},
              {"absolute", report::uses_absolute_change(m.name)}};
}

// The command that prints the whole table, naming both commits by sha: a ref moves on (the table would change
// under it) and may hold characters a shell splits on.
std::string more_command(const Side& a, const Side& b, const std::string& job, const std::string& tree) {
  return "bisectctl compare " + a.sha.substr(0, 12) + " " + b.sha.substr(0, 12) + " --job " + job +
         (tree.empty() ? "" : " --tree " + tree) + " --all";
}

} // namespace

HttpResponse get_compare(ApiContext& c, const Call& call) {
  auto tree = call.query_or("tree");
  auto all = query_flag(call, "all");
  if (!all) {
    return error_response(all.error());
  }
  Side a, b;
  a.key = "a";
  a.given = call.query_or("a");
  b.key = "b";
  b.given = call.query_or("b");
  for (Side* side : {&a, &b}) {
    if (auto loaded = load_side(c, tree, *side); !loaded) {
      return error_response(loaded.error());
    }
  }
  auto job_name = common_job(a, b, call.query_or("job"));
  if (!job_name) {
    return error_response(job_name.error());
  }
  // The job's primary and watch metrics lead the table, as in its reports; a job no longer stored has none.
  std::string primary;
  std::vector<std::string> watch, monitors;
  if (auto job = c.jobs.get(*job_name)) {
    primary = (*job)->metrics.primary;
    watch = (*job)->metrics.watch;
    monitors = monitor_families(**job);
  }
  auto metrics = report::compare_runs(runs_of(a, *job_name), runs_of(b, *job_name));
  auto table = report::select_rows(metrics, primary, watch, *all ? 0 : report::k_default_row_cap);
  auto unavailable = report::unavailable_monitors(monitors, metrics);
  json rows = json::array();
  for (const auto& row : table.rows) {
    rows.push_back(row_json(row));
  }
  auto text = report::render_comparison(*job_name, commit_of(c, a), commit_of(c, b), table,
                                        more_command(a, b, *job_name, tree), unavailable);
  return json_response(200, {{"job", *job_name},
                             {"a", {{"commit", a.sha}, {"runs", runs_of(a, *job_name).size()}}},
                             {"b", {{"commit", b.sha}, {"runs", runs_of(b, *job_name).size()}}},
                             {"primary", null_if_empty(primary)},
                             {"rows", rows},
                             {"hidden", table.hidden},
                             {"unavailable_monitors", unavailable},
                             {"text", text}});
}

} // namespace bisectd::daemon::api
