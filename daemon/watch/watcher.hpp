#pragma once
// Watching trees: poll each tree's branches and measure every new head. Two detectors propose shifts:
// (a) a head differs from the last measured one beyond the job's threshold (a big jump, seen at once);
// (b) the change-point detector over the series of measured heads (daemon/watch/series.hpp) finds a smaller shift
// that built up over several pushes. Either goes to the interleaved confirmation (confirmation.hpp) before a
// bisection is opened; at most one detection per branch is being confirmed at a time. Every measured head leaves a
// detection row (baseline, below the threshold, a shift being confirmed, failed: `bisectctl detections`). A head
// that does not contain the last measured one (a rebased, force-pushed branch) is compared with it all the same
// (their performance is comparable, their ancestry is not); rewrite.hpp decides where such a shift is bisected.

#include "daemon/core/job_catalog.hpp"
#include "daemon/watch/confirmation.hpp"
#include "daemon/watch/series.hpp"
#include "daemon/watch/stores.hpp"

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace bisectd::daemon::watch {

class Watcher {
public:
  // `poll_interval`: for trees without their own.
  Watcher(WatchStores stores, TreeRepos& repos, SeriesReader& series, JobCatalog& jobs, Confirmation& confirmation,
          std::chrono::seconds poll_interval)
      : m_stores(stores), m_repos(repos), m_series(series), m_jobs(jobs), m_confirmation(confirmation),
        m_poll_interval(poll_interval) {}

  // Trees whose poll interval has passed (io thread); marks them polled.
  std::vector<storage::TreeRow> due_trees(std::int64_t now);
  // Records fetched heads (io thread); a branch the remote lacks, or none, is the tree's watch error, and the
  // missing branch's own: its watch stops (the tree stays) until the branch is back.
  void on_heads(const storage::TreeRow& tree, const std::map<std::string, std::string>& heads);
  // Records why a fetch failed as the tree's watch error (io thread); logged when it changes.
  void on_fetch_failed(const storage::TreeRow& tree, const std::string& error);
  // Measures new heads, compares measured ones, runs confirmations, opens bisections (io thread).
  void advance();

private:
  void record_watch_error(const storage::TreeRow& tree, const std::string& error);
  void record_branch_error(const storage::TreeRow& tree, const std::string& branch, const std::string& error);
  // Logs a branch's failing step once per distinct error (a step that fails every tick must not flood the log).
  void log_failure(const std::string& key, const Status& status);
  // Stores a decision on the head (tree, branch) measured (or failed to measure): one detection row.
  Status record_head(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                     const storage::HeadRow& head, storage::DetectionState state, const std::string& note,
                     std::int64_t request_id = 0);
  Status record_unmeasurable(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                             const storage::HeadRow& head);
  Status advance_branch(const storage::TreeRow& tree, const std::string& branch, const Job& job);
  Status compare_heads(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                       const storage::HeadRow& head);
  // Runs the change-point detector once per new baseline; queues a confirmation for the newest new shift.
  Status check_series(const storage::TreeRow& tree, const std::string& branch, const Job& job, const std::string& tip);
  Result<std::set<std::string>> branch_heads(const std::string& tree, const std::string& branch,
                                             const std::string& job);
  Status enqueue_watch(const storage::TreeRow& tree, const Job& job, const std::string& commit);

  WatchStores m_stores;
  TreeRepos& m_repos;
  SeriesReader& m_series;
  JobCatalog& m_jobs;
  Confirmation& m_confirmation;
  std::chrono::seconds m_poll_interval;
  std::map<std::string, std::int64_t> m_last_poll;
  std::map<std::string, std::string> m_series_checked; // "tree\nbranch" -> baseline the detector last saw
  std::map<std::string, std::string> m_failing;        // "tree\nbranch" -> the error last logged
};

} // namespace bisectd::daemon::watch
