#pragma once
// Confirming a detected shift: the two ends are rerun interleaved on one machine (lab drift hits both sides alike);
// a confirmed shift opens a bisection, an inconclusive one is measured more (bounded), anything else is rejected.
// A head-to-head detection held the branch's new head back; it becomes the baseline once decided. A confirmed shift
// across a rewritten history is bisected on the new history, or not at all (rewrite.hpp). A bisection that cannot
// be opened fails the detection with the reason (never retried every tick).

#include "bisect/detect.hpp"
#include "daemon/core/bisection_starter.hpp"
#include "daemon/core/job_catalog.hpp"
#include "daemon/core/lab_view.hpp"
#include "daemon/watch/rewrite.hpp"
#include "daemon/watch/series.hpp"
#include "daemon/watch/stores.hpp"

#include <map>
#include <string>

namespace bisectd::daemon::watch {

class Confirmation {
public:
  // `min_runs`: runs per side of the first round (the config's confirm_runs, at least 5).
  Confirmation(WatchStores stores, SeriesReader& series, JobCatalog& jobs, const LabView& lab,
               BisectionStarter& bisections, int min_runs)
      : m_stores(stores), m_series(series), m_jobs(jobs), m_lab(lab), m_bisections(bisections), m_min_runs(min_runs),
        m_new_history(stores, series) {}

  // Stores `proposal` as a confirming detection and queues its first round of interleaved runs.
  Status start(const storage::DetectionRow& proposal, const Job& job);
  // Decides every confirming detection whose runs are all in (io thread).
  void advance();
  // True while a detection of (tree, branch, job) is being confirmed: one shift per branch at a time.
  Result<bool> confirming(const std::string& tree, const std::string& branch, const std::string& job);

private:
  Status advance_detection(const storage::DetectionRow& detection);
  // The confirmed shift of `d` bisected from `good` to `bad`; the detection is confirmed (or failed) with `note`.
  Status open_bisection(storage::DetectionRow d, const std::string& good, const std::string& event,
                        const std::string& note);
  // A rewritten detection's next step on the new history (rewrite.hpp), stored.
  Status advance_new_history(storage::DetectionRow d, const Job& job);
  // The branch's head, held back while `d` was decided, becomes the baseline.
  Status release_head(const storage::DetectionRow& d);
  int first_round_runs(const storage::DetectionRow& detection, const Job& job);
  Result<int> enqueue_round(const storage::DetectionRow& detection, const Job& job, int per_side);

  WatchStores m_stores;
  SeriesReader& m_series;
  JobCatalog& m_jobs;
  const LabView& m_lab;
  BisectionStarter& m_bisections;
  int m_min_runs;
  NewHistory m_new_history;
  std::map<std::int64_t, std::string> m_failing; // detection id -> the error last logged
};

} // namespace bisectd::daemon::watch
