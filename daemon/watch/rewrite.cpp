#include "daemon/watch/rewrite.hpp"

#include "base/strings.hpp"
#include "bisect/detect.hpp"
#include "daemon/core/requests.hpp"

#include <spdlog/spdlog.h>

#include <cmath>

namespace bisectd::daemon::watch {

namespace {

// Watch requests of the merge base that may fail (each with its own bounded retries) before the detection fails.
constexpr std::int64_t k_max_base_requests = 2;

using storage::DetectionState;

} // namespace

Result<bool> NewHistory::crosses_rewrite(const storage::DetectionRow& d) {
  bool contains = true;
  BISECTD_TRY(m_repos.with_repo(d.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(contains, repo.is_ancestor(d.good, d.bad));
    return {};
  }));
  return !contains;
}

Result<NewHistoryStep> NewHistory::locate(const storage::DetectionRow& d, const Job& job) {
  std::string merge_base;
  auto found = m_repos.with_repo(d.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(merge_base, repo.merge_base(d.good, d.bad));
    return {};
  });
  if (!found) {
    return NewHistoryStep{DetectionState::failed, "",
                          "the new head shares no history with the old one: nothing to bisect (" +
                            found.error().message + ")"};
  }
  // The newest measured ancestor of the new head other than itself (the series is in ancestry order).
  BISECTD_TRY_ASSIGN(auto series, m_series.load(d.tree, job, d.bad, {d.metric}));
  std::string base = merge_base;
  for (auto it = series.commits.rbegin(); it != series.commits.rend(); ++it) {
    if (*it == d.bad) {
      continue;
    }
    bool newer = false;
    BISECTD_TRY(m_repos.with_repo(d.tree, [&](vcs::Repo& repo) -> Status {
      BISECTD_TRY_ASSIGN(newer, repo.is_ancestor(merge_base, *it));
      return {};
    }));
    if (newer) {
      base = *it;
    }
    break;
  }
  return NewHistoryStep{DetectionState::measuring_base, base,
                        "rewritten history: searching the new history from " + base::short_sha(base) +
                          (base == merge_base ? " (the merge base)" : " (the newest measured ancestor)")};
}

Result<NewHistoryStep> NewHistory::advance(const storage::DetectionRow& d, const Job& job) {
  NewHistoryStep wait{DetectionState::measuring_base, d.base, d.note};
  if (d.base != d.bad) { // the new head is an older commit of the branch (rewound): it is the base itself
    BISECTD_TRY_ASSIGN(auto open, m_stores.queue.open_requests_for(job.name, d.base));
    if (open > 0) {
      return wait;
    }
    BISECTD_TRY_ASSIGN(bool watched, m_series.is_watched(d.tree, job, d.base));
    if (!watched) {
      BISECTD_TRY_ASSIGN(auto failed, m_stores.queue.failed_requests_for(job.name, d.base, storage::Purpose::watch));
      if (failed >= k_max_base_requests) {
        BISECTD_TRY_ASSIGN(auto request, m_stores.queue.last_failed_request(job.name, d.base, storage::Purpose::watch));
        auto id = request ? request->id : 0;
        return NewHistoryStep{DetectionState::failed, d.base,
                              "the merge base " + base::short_sha(d.base) + " could not be measured: request " +
                                std::to_string(id) + ": " + (request ? request->error : std::string("failed")),
                              id};
      }
      BISECTD_TRY(m_stores.queue.enqueue(make_request(job, d.tree, d.base, storage::Purpose::watch, job.runs)));
      spdlog::info("detection {}: rewritten history: measuring the merge base {}", d.id, base::short_sha(d.base));
      return wait;
    }
  }
  BISECTD_TRY_ASSIGN(auto base_values, metric_values(m_stores.samples, job.name, d.metric, {}, d.base));
  BISECTD_TRY_ASSIGN(auto head_values, metric_values(m_stores.samples, job.name, d.metric, {}, d.bad));
  return decide(d, job, base_values, head_values);
}

// Size alone decides, as for two heads: a base within the threshold of the new head holds the new head's level.
NewHistoryStep NewHistory::decide(const storage::DetectionRow& d, const Job& job,
                                  const std::vector<double>& base_values, const std::vector<double>& head_values) {
  double change = 0;
  if (d.base != d.bad) {
    change = bisect::confirm_shift(base_values, head_values, job.metrics.threshold).relative_change;
  }
  auto versus =
    base::short_sha(d.base) + " vs the new head " + base::short_sha(d.bad) + ": " + base::signed_percent(change);
  if (d.base == d.bad || std::abs(change) < job.metrics.threshold) {
    return NewHistoryStep{DetectionState::dropped_by_rewrite, d.base,
                          "came with commits dropped by the rewrite of " + d.branch + " (" + versus + ")", 0, change};
  }
  return NewHistoryStep{DetectionState::confirmed, d.base,
                        "rewritten history: bisecting the new history " + base::short_sha(d.base) + ".." +
                          base::short_sha(d.bad) + " (" + versus + ")",
                        0, change};
}

} // namespace bisectd::daemon::watch
