#include "daemon/series.hpp"

#include "storage/query.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

namespace bisectd::daemon {

namespace {

using storage::integer;
using storage::text;

// Commits of finished watch requests, newest first (by when they were first measured).
Result<std::vector<std::string>> watched_commits(storage::Store& store, const std::string& tree, const Job& job,
                                                 std::size_t limit) {
  return storage::query<std::string>(
    store.connection(),
    "SELECT commit_sha FROM requests WHERE tree = ? AND job = ? AND machine_group = ? AND purpose = 'watch' "
    "AND state = 'done' GROUP BY commit_sha ORDER BY MIN(id) DESC LIMIT ?",
    {text(tree), text(job.name), text(job.machine_group), integer(static_cast<std::int64_t>(limit))},
    [](const storage::Statement& s) { return s.column_text(0); });
}

// Keeps the ancestors of `tip` and puts them in ancestry order (insertion sort: the input is nearly sorted,
// so this costs about one is_ancestor per commit).
Result<std::vector<std::string>> order_by_ancestry(Context& context, const std::string& tree,
                                                   const std::vector<std::string>& oldest_first,
                                                   const std::string& tip) {
  std::vector<std::string> sorted;
  BISECTD_TRY(context.trees->with_repo(tree, [&](vcs::Repository& repo) -> Status {
    for (const auto& commit : oldest_first) {
      BISECTD_TRY_ASSIGN(bool on_branch, repo.is_ancestor(commit, tip));
      if (!on_branch) {
        continue; // a head the branch no longer contains (rewound)
      }
      auto at = sorted.size();
      while (at > 0) {
        BISECTD_TRY_ASSIGN(bool before, repo.is_ancestor(sorted[at - 1], commit));
        if (before) {
          break;
        }
        --at;
      }
      sorted.insert(sorted.begin() + static_cast<std::ptrdiff_t>(at), commit);
    }
    return {};
  }));
  return sorted;
}

// (a, b] and (c, d] share a commit (on one line of history).
Result<bool> overlaps(vcs::Repository& repo, const std::string& a, const std::string& b, const std::string& c,
                      const std::string& d) {
  if (a == d || c == b) {
    return false;
  }
  BISECTD_TRY_ASSIGN(bool a_before_d, repo.is_ancestor(a, d));
  if (!a_before_d) {
    return false;
  }
  return repo.is_ancestor(c, b);
}

// (a, b] lies within (c, d].
Result<bool> contained(vcs::Repository& repo, const std::string& a, const std::string& b, const std::string& c,
                       const std::string& d) {
  BISECTD_TRY_ASSIGN(bool starts_inside, repo.is_ancestor(c, a));
  if (!starts_inside) {
    return false;
  }
  return repo.is_ancestor(b, d);
}

struct Range {
  std::string good, bad;
  bool rejected = false;
};

Result<std::vector<Range>> known_ranges(storage::Store& store, const std::string& tree, const std::string& branch,
                                        const Job& job) {
  std::vector<Range> out;
  for (const char* state : {"confirming", "confirmed", "rejected"}) {
    BISECTD_TRY_ASSIGN(auto rows, store.detections_in_state(state));
    for (const auto& d : rows) {
      if (d.tree == tree && d.branch == branch && d.job == job.name) {
        out.push_back({d.good, d.bad, d.state == "rejected"});
      }
    }
  }
  BISECTD_TRY_ASSIGN(auto bisections, store.bisections(tree));
  for (const auto& b : bisections) {
    if (b.branch == branch && b.job == job.name) {
      out.push_back({b.good, b.bad, false});
    }
  }
  return out;
}

} // namespace

Result<HeadSeries> load_series(Context& context, const std::string& tree, const Job& job, const std::string& tip,
                               std::size_t limit) {
  BISECTD_TRY_ASSIGN(auto newest_first, watched_commits(*context.store, tree, job, limit));
  std::reverse(newest_first.begin(), newest_first.end());
  HeadSeries series;
  BISECTD_TRY_ASSIGN(series.commits, order_by_ancestry(context, tree, newest_first, tip));
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < series.commits.size(); ++i) {
    index[series.commits[i]] = i;
  }
  using Sample = std::pair<std::string, std::string>; // commit, metrics JSON
  BISECTD_TRY_ASSIGN(auto samples, storage::query<Sample>(
    context.store->connection(),
    "SELECT s.commit_sha, s.metrics FROM samples s JOIN requests r ON r.id = s.request_id "
    "WHERE r.tree = ? AND r.job = ? AND r.machine_group = ? AND s.variant = '' ORDER BY s.id",
    {text(tree), text(job.name), text(job.machine_group)},
    [](const storage::Statement& s) { return Sample{s.column_text(0), s.column_text(1)}; }));
  for (const auto& [commit, metrics_json] : samples) {
    auto at = index.find(commit);
    auto metrics = nlohmann::json::parse(metrics_json, nullptr, false);
    if (at == index.end() || !metrics.is_object()) {
      continue;
    }
    for (const auto& [name, value] : metrics.items()) {
      if (!value.is_number()) {
        continue;
      }
      auto& points = series.metrics[name];
      if (points.empty()) {
        points.resize(series.commits.size());
        for (std::size_t i = 0; i < points.size(); ++i) {
          points[i].id = series.commits[i];
        }
      }
      points[at->second].samples.push_back(value.get<double>());
    }
  }
  return series;
}

Result<bool> is_watched(storage::Store& store, const std::string& tree, const Job& job, const std::string& commit) {
  BISECTD_TRY_ASSIGN(auto rows, storage::query<std::int64_t>(
    store.connection(),
    "SELECT COUNT(*) FROM requests WHERE tree = ? AND job = ? AND machine_group = ? AND purpose = 'watch' "
    "AND state = 'done' AND commit_sha = ?",
    {text(tree), text(job.name), text(job.machine_group), text(commit)},
    [](const storage::Statement& s) { return s.column_int(0); }));
  return !rows.empty() && rows.front() > 0;
}

std::vector<std::string> alerting_metrics(const Job& job) {
  std::vector<std::string> out{job.metrics.primary};
  for (const auto& name : job.metrics.watch) {
    if (std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  }
  return out;
}

std::vector<Candidate> find_candidates(const HeadSeries& series, const Job& job) {
  std::vector<Candidate> out;
  bisect::DetectOptions options;
  options.min_relative_change = job.metrics.threshold;
  for (const auto& metric : alerting_metrics(job)) {
    auto points = series.metrics.find(metric);
    if (points == series.metrics.end()) {
      continue;
    }
    for (const auto& cp : bisect::detect_change_points(points->second, options)) {
      if (cp.index == 0 || cp.index >= series.commits.size()) {
        continue;
      }
      auto begin = std::clamp<std::size_t>(cp.range_begin, 1, cp.index);
      auto end = std::clamp<std::size_t>(cp.range_end, cp.index, series.commits.size() - 1);
      out.push_back({metric, series.commits[begin - 1], series.commits[end], series.commits[cp.index - 1],
                     series.commits[cp.index], cp});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Candidate& a, const Candidate& b) { return a.point.index > b.point.index; });
  return out;
}

Result<bool> is_covered(Context& context, const std::string& tree, const std::string& branch, const Job& job,
                        const Candidate& c) {
  BISECTD_TRY_ASSIGN(auto ranges, known_ranges(*context.store, tree, branch, job));
  bool covered = false;
  BISECTD_TRY(context.trees->with_repo(tree, [&](vcs::Repository& repo) -> Status {
    for (const auto& r : ranges) {
      bool hit = false;
      if (r.rejected) {
        // Reruns of a wider range found no threshold-sized shift; a narrower one cannot hold one either.
        // A rejected narrower range proves nothing: a shift built over several pushes is bigger than each.
        BISECTD_TRY_ASSIGN(hit, contained(repo, c.good, c.bad, r.good, r.bad));
      } else {
        BISECTD_TRY_ASSIGN(hit, overlaps(repo, c.good, c.bad, r.good, r.bad));
      }
      if (hit) {
        covered = true;
        return {};
      }
    }
    return {};
  }));
  return covered;
}

} // namespace bisectd::daemon
