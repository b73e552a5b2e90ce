#pragma once
// A confirmed shift across a rewritten history (the new head does not contain the old one): where to bisect it.
// The search runs on the new history only, from the newest measured commit that is an ancestor of the new head:
// the merge base with the old head, or a measured head newer than it; a merge base never measured is measured
// first (a watch request: it joins the series). When that commit already reads like the new head, the shift came
// with commits the rewrite dropped: nothing on the branch is left to bisect, and the detection says so.

#include "daemon/core/job.hpp"
#include "daemon/core/tree_repos.hpp"
#include "daemon/watch/series.hpp"
#include "daemon/watch/stores.hpp"

#include <optional>
#include <string>

namespace bisectd::daemon::watch {

// What a rewritten detection is waiting for, or what was decided.
struct NewHistoryStep {
  storage::DetectionState state; // measuring_base, failed, dropped_by_rewrite, or confirmed (bisect base..bad)
  std::string base;              // the commit the new history is searched from
  std::string note;              // what was found, in words
  std::int64_t request_id = 0;   // a failed measurement's request
  double change = 0;             // base vs the new head (confirmed, dropped_by_rewrite)
};

class NewHistory {
public:
  NewHistory(WatchStores stores, SeriesReader& series) : m_stores(stores), m_repos(series.repos()), m_series(series) {}

  // True when `d.good` is not an ancestor of `d.bad`: the branch was rewritten between them.
  Result<bool> crosses_rewrite(const storage::DetectionRow& d);
  // The commit to search from for a confirmed rewritten detection `d` (good: the old head, bad: the new head).
  Result<NewHistoryStep> locate(const storage::DetectionRow& d, const Job& job);
  // The next step of a detection measuring its base: queue the measurement, wait, give up or decide.
  Result<NewHistoryStep> advance(const storage::DetectionRow& d, const Job& job);

private:
  NewHistoryStep decide(const storage::DetectionRow& d, const Job& job, const std::vector<double>& base_values,
                        const std::vector<double>& head_values);

  WatchStores m_stores;
  TreeRepos& m_repos;
  SeriesReader& m_series;
};

} // namespace bisectd::daemon::watch
