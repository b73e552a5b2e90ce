// GET a commit's samples and a job's noise.
#include "base/glob.hpp"
#include "bisect/detect.hpp"
#include "daemon/api/page.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"

namespace bisectd::daemon::api {

using nlohmann::json;

Result<std::string> resolve_commit(ApiContext& c, const std::string& tree, const std::string& rev) {
  BISECTD_TRY_ASSIGN(auto row, c.trees.tree(tree));
  if (!row) {
    return make_error(ErrorCode::not_found, "tree: '" + tree + "' not found");
  }
  std::string sha;
  BISECTD_TRY(c.repos.with_repo(tree, [&](vcs::Repo& repo) -> Status {
    auto resolved = repo.resolve(rev);
    if (!resolved) {
      return make_error(ErrorCode::not_found, "commit: unknown revision '" + rev + "' in tree " + tree);
    }
    sha = *resolved;
    return {};
  }));
  return sha;
}

Result<bool> query_flag(const Call& call, const std::string& key) {
  auto value = call.query_or(key);
  if (value.empty() || value == "0" || value == "false") {
    return false;
  }
  if (value == "1" || value == "true") {
    return true;
  }
  return make_error(ErrorCode::invalid_input, key + ": '" + value + "' is not 1, true, 0 or false");
}

namespace {

// A page of /results: a sample may carry 10,000 metrics, so a page holds few of them.
constexpr PageBounds k_sample_page{.default_limit = 20, .max_limit = 100};
// A page of /noise: metric names.
constexpr PageBounds k_noise_page{.default_limit = 500, .max_limit = 2000};

// Only the metrics whose names match `glob`; a sample left with none is left out.
std::vector<storage::SampleRow> keep_metrics(std::vector<storage::SampleRow> rows, const std::string& glob) {
  std::vector<storage::SampleRow> out;
  for (auto& s : rows) {
    std::erase_if(s.metrics, [&](const auto& metric) { return !base::glob_match(glob, metric.first); });
    if (!s.metrics.empty()) {
      out.push_back(std::move(s));
    }
  }
  return out;
}

} // namespace

HttpResponse get_results(ApiContext& c, const Call& call) {
  auto commit = call.params.at("commit");
  auto tree = call.query_or("tree");
  auto metric = call.query_or("metric");
  if (auto bad = base::glob_error(metric); !metric.empty() && bad) {
    return error_response(400, "metric: '" + metric + "': " + *bad);
  }
  auto page = parse_page(call.query, k_sample_page);
  auto after = page ? page_after_id(*page) : Result<std::int64_t>(0);
  if (!page || !after) {
    return error_response(page ? after.error() : page.error());
  }
  bool hex = commit.size() >= 7 && commit.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex && tree.empty()) {
    return error_response(400, "commit: '" + commit + "' is not a sha (at least 7 hex digits); a ref needs ?tree=");
  }
  if (!hex) { // a ref (master, v6.1, HEAD~2): resolved in the tree's mirror
    auto resolved = resolve_commit(c, tree, commit);
    if (!resolved) {
      return error_response(resolved.error());
    }
    commit = *resolved;
  }
  // One more than the page: whether a next page exists, without counting them all.
  auto rows = c.samples.samples_for_commit_prefix(commit, tree, *after, page->limit + 1);
  if (!rows) {
    return error_response(500, rows.error().message);
  }
  json next = nullptr;
  if (rows->size() > page->limit) {
    rows->resize(page->limit);
    next = std::to_string(rows->back().id);
  }
  auto kept = metric.empty() ? std::move(*rows) : keep_metrics(std::move(*rows), metric);
  json samples = json::array();
  for (const auto& s : kept) {
    samples.push_back({{"job", s.job},
                       {"commit", s.commit},
                       {"variant", s.variant},
                       {"machine", s.machine},
                       {"boot_id", s.boot_id},
                       {"run", s.run},
                       {"metrics", s.metrics},
                       {"created_at", iso_or_null(s.created_at)}});
  }
  auto flags = c.samples.commit_flags(commit);
  if (!flags) {
    return error_response(500, flags.error().message);
  }
  if (!tree.empty()) { // flags belong to jobs: the tree's job's
    auto row = c.trees.tree(tree);
    auto job = row && *row ? (*row)->job : std::string();
    std::erase_if(*flags, [&](const storage::FlagRow& f) { return f.key.job != job; });
  }
  return json_response(
    200, {{"commit", commit}, {"flags", commit_flags_json(c, *flags)}, {"samples", samples}, {"next", next}});
}

HttpResponse get_noise(ApiContext& c, const Call& call) {
  auto job_name = call.query_or("job");
  auto tree = call.query_or("tree");
  if (job_name.empty() && !tree.empty()) { // the tree's job, as `bisect start` takes it
    auto row = c.trees.tree(tree);
    if (!row) {
      return error_response(500, row.error().message);
    }
    if (!*row) {
      return error_response(404, "tree '" + tree + "' not found");
    }
    job_name = (*row)->job;
  }
  if (job_name.empty()) {
    return error_response(400, "noise: name a tree or a job (?tree=NAME or ?job=NAME)");
  }
  auto page = parse_page(call.query, k_noise_page);
  if (!page) {
    return error_response(page.error());
  }
  auto rows = c.samples.samples_for_job(job_name);
  if (!rows) {
    return error_response(500, rows.error().message);
  }
  // The shift the runs are sized for: the job's threshold (the smallest change that may open a bisection).
  auto job = c.jobs.get(job_name);
  double threshold = job ? (*job)->metrics.threshold : 0.0;
  // One series per metric: commits in the order they were first measured.
  std::map<std::string, std::vector<bisect::SeriesPoint>> series;
  std::map<std::string, std::map<std::string, std::size_t>> position;
  for (const auto& s : *rows) {
    if ((!tree.empty() && s.tree != tree) || !s.variant.empty()) {
      continue;
    }
    for (const auto& [name, value] : s.metrics) {
      auto [it, inserted] = position[name].try_emplace(s.commit, series[name].size());
      if (inserted) {
        series[name].push_back({s.commit, {}});
      }
      series[name][it->second].samples.push_back(value);
    }
  }
  // One page of metric names (after ?after=, in name order).
  json out = json::array();
  json next = nullptr;
  for (auto it = series.upper_bound(page->after); it != series.end(); ++it) {
    if (out.size() == page->limit) {
      next = out.back()["name"];
      break;
    }
    const auto& [name, points] = *it;
    auto estimate = bisect::estimate_noise(points);
    json entry = {{"name", name},
                  {"commits", estimate.commits},
                  {"runs", estimate.runs},
                  {"run_sigma_pct", 100.0 * estimate.run_sigma},
                  {"commit_sigma_pct", 100.0 * estimate.commit_sigma},
                  {"heavy_tailed", estimate.heavy_tailed},
                  {"bimodal", estimate.bimodal}};
    // -1: more runs per commit cannot make a threshold-sized shift visible (commit jitter alone is too big).
    entry["runs_for_threshold"] = threshold > 0 ? json(estimate.runs_for(threshold)) : json(nullptr);
    entry["confirm_runs_for_threshold"] = threshold > 0 ? json(estimate.confirm_runs_for(threshold)) : json(nullptr);
    out.push_back(entry);
  }
  json body = {{"tree", tree}, {"job", job_name}, {"metrics", out}, {"next", next}};
  body["threshold"] = threshold > 0 ? json(threshold) : json(nullptr);
  return json_response(200, body);
}

} // namespace bisectd::daemon::api
