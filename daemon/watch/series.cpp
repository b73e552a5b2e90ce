#include "daemon/watch/series.hpp"

#include <algorithm>
#include <utility>

namespace bisectd::daemon::watch {

namespace {

// (a, b] and (c, d] share a commit (on one line of history).
Result<bool> overlaps(vcs::Repo& repo, const std::string& a, const std::string& b, const std::string& c,
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
Result<bool> contained(vcs::Repo& repo, const std::string& a, const std::string& b, const std::string& c,
                       const std::string& d) {
  BISECTD_TRY_ASSIGN(bool starts_inside, repo.is_ancestor(c, a));
  if (!starts_inside) {
    return false;
  }
  return repo.is_ancestor(b, d);
}

// Where (good, bad] starts on bad's history: across a rewrite (good is not an ancestor of bad), at the merge base.
Result<std::string> start_on_history(vcs::Repo& repo, const std::string& good, const std::string& bad) {
  BISECTD_TRY_ASSIGN(bool ancestor, repo.is_ancestor(good, bad));
  if (ancestor) {
    return good;
  }
  auto base = repo.merge_base(good, bad);
  return base ? *base : good; // no shared history: the range overlaps nothing
}

struct Range {
  std::string good, bad;
  bool rejected = false;
};

Result<std::vector<Range>> known_ranges(storage::DetectionStore& detections, storage::BisectionStore& store,
                                        const std::string& tree, const std::string& branch, const Job& job) {
  std::vector<Range> out;
  using storage::DetectionState;
  for (auto state : {DetectionState::confirming, DetectionState::measuring_base, DetectionState::confirmed,
                     DetectionState::rejected}) {
    BISECTD_TRY_ASSIGN(auto rows, detections.detections_in_state(state));
    for (const auto& d : rows) {
      if (d.tree == tree && d.branch == branch && d.job == job.name) {
        out.push_back({d.good, d.bad, d.state == DetectionState::rejected});
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

// The ancestors of `tip` and the `branch_heads` it dropped, in the order they were measured; a commit measured
// after some of its descendants goes before them, so that on one line of history this is ancestry order
// (insertion sort: the input is nearly sorted, about one is_ancestor per commit).
Result<std::vector<std::string>> SeriesReader::order_as_measured(const std::string& tree,
                                                                 const std::vector<std::string>& oldest_first,
                                                                 const std::string& tip,
                                                                 const std::set<std::string>& branch_heads) {
  std::vector<std::string> sorted;
  BISECTD_TRY(m_trees.with_repo(tree, [&](vcs::Repo& repo) -> Status {
    for (const auto& commit : oldest_first) {
      BISECTD_TRY_ASSIGN(bool on_branch, repo.is_ancestor(commit, tip));
      if (!on_branch && !branch_heads.contains(commit)) {
        continue; // another branch's head, or a commit measured for a bisection of another history
      }
      auto at = sorted.size();
      while (at > 0) {
        BISECTD_TRY_ASSIGN(bool after, repo.is_ancestor(commit, sorted[at - 1]));
        if (!after) {
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

Result<HeadSeries> SeriesReader::load(const std::string& tree, const Job& job, const std::string& tip,
                                      const std::vector<std::string>& metrics, std::size_t limit) {
  return read(tree, job, tip, {}, metrics, limit);
}

Result<HeadSeries> SeriesReader::load_branch(const std::string& tree, const Job& job, const std::string& tip,
                                             const std::set<std::string>& branch_heads, std::size_t limit) {
  return read(tree, job, tip, branch_heads, {}, limit);
}

Result<HeadSeries> SeriesReader::read(const std::string& tree, const Job& job, const std::string& tip,
                                      const std::set<std::string>& branch_heads,
                                      const std::vector<std::string>& metrics, std::size_t limit) {
  BISECTD_TRY_ASSIGN(auto newest_first, m_queue.watched_commits(tree, job.name, job.machine_group, limit));
  std::reverse(newest_first.begin(), newest_first.end());
  HeadSeries series;
  BISECTD_TRY_ASSIGN(series.commits, order_as_measured(tree, newest_first, tip, branch_heads));
  BISECTD_TRY(add_points(series, tree, job, metrics));
  return series;
}

Status SeriesReader::add_points(HeadSeries& series, const std::string& tree, const Job& job,
                                const std::vector<std::string>& metrics) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < series.commits.size(); ++i) {
    index[series.commits[i]] = i;
  }
  BISECTD_TRY_ASSIGN(auto samples, m_samples.series_samples(tree, job.name, job.machine_group,
                                                            metrics.empty() ? alerting_metrics(job) : metrics));
  for (const auto& [name, sample] : samples) {
    auto at = index.find(sample.commit);
    if (at == index.end()) {
      continue;
    }
    auto& points = series.metrics[name];
    if (points.empty()) {
      points.resize(series.commits.size());
      for (std::size_t i = 0; i < points.size(); ++i) {
        points[i].id = series.commits[i];
      }
    }
    // Which machine and boot measured each sample: the detector removes machine offsets and noisy boots.
    points[at->second].samples.push_back(sample.value);
    points[at->second].origins.push_back(bisect::SampleOrigin{sample.machine, sample.boot_id});
  }
  return {};
}

Result<bool> SeriesReader::is_watched(const std::string& tree, const Job& job, const std::string& commit) {
  return m_queue.is_watched(tree, job.name, job.machine_group, commit);
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

Result<bool> is_covered(TreeRepos& trees, storage::DetectionStore& detections, storage::BisectionStore& bisections,
                        const std::string& tree, const std::string& branch, const Job& job, const Candidate& c) {
  BISECTD_TRY_ASSIGN(auto ranges, known_ranges(detections, bisections, tree, branch, job));
  bool covered = false;
  BISECTD_TRY(trees.with_repo(tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(auto good, start_on_history(repo, c.good, c.bad));
    for (const auto& r : ranges) {
      bool hit = false;
      if (r.rejected) {
        // Reruns of a wider range found no threshold-sized shift; a narrower one cannot hold one either.
        // A rejected narrower range proves nothing: a shift built over several pushes is bigger than each.
        // (Across a rewrite it says only that the two heads perform alike: `contained` is then false.)
        BISECTD_TRY_ASSIGN(hit, contained(repo, good, c.bad, r.good, r.bad));
      } else {
        BISECTD_TRY_ASSIGN(auto known_good, start_on_history(repo, r.good, r.bad));
        BISECTD_TRY_ASSIGN(hit, overlaps(repo, good, c.bad, known_good, r.bad));
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

} // namespace bisectd::daemon::watch
