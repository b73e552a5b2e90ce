#pragma once
// A watched branch's history as benchmark series: the measured heads of (tree, job, machine group) in the
// first-parent order of the newest head, with the alerting metrics' samples; the change-point detector's
// proposals over them; and whether a proposed range is already accounted for by a detection or a bisection.

#include "bisect/detect.hpp"
#include "daemon/core/job.hpp"
#include "daemon/core/tree_repos.hpp"
#include "storage/bisection_store.hpp"
#include "storage/detection_store.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace bisectd::daemon::watch {

struct HeadSeries {
  std::vector<std::string> commits;                                // measured heads, oldest first
  std::map<std::string, std::vector<bisect::SeriesPoint>> metrics; // metric -> points parallel to `commits`
};

class SeriesReader {
public:
  SeriesReader(TreeRepos& trees, storage::QueueStore& queue, storage::SampleStore& samples)
      : m_trees(trees), m_queue(queue), m_samples(samples) {}

  // The heads measured by watch requests of (tree, job, job.machine_group) that are ancestors of `tip` (the
  // newest measured head), oldest first, at most the newest `limit`; each point carries every sample of its
  // commit measured in that group (watch, confirm and bisect runs alike: samples are shared), normal builds only.
  // `metrics`: the metrics to load (empty: the job's alerting metrics).
  Result<HeadSeries> load(const std::string& tree, const Job& job, const std::string& tip,
                          const std::vector<std::string>& metrics = {}, std::size_t limit = 200);

  // As load(), for the change-point detector of one branch: its series follows the branch across rewrites.
  // `branch_heads`, the heads the branch had (its detection rows), stay in the series when the branch no longer
  // contains them; every commit keeps the order it was measured in, except that one measured after its
  // descendants (a merge base, a rewound head) goes before them.
  Result<HeadSeries> load_branch(const std::string& tree, const Job& job, const std::string& tip,
                                 const std::set<std::string>& branch_heads, std::size_t limit = 200);

  // True when a watch request of (tree, job, job.machine_group) measured `commit` (it is then in the series).
  Result<bool> is_watched(const std::string& tree, const Job& job, const std::string& commit);

  // The trees' histories the series are read from.
  [[nodiscard]] TreeRepos& repos() const { return m_trees; }

private:
  Result<std::vector<std::string>> order_as_measured(const std::string& tree,
                                                     const std::vector<std::string>& oldest_first,
                                                     const std::string& tip, const std::set<std::string>& branch_heads);
  Result<HeadSeries> read(const std::string& tree, const Job& job, const std::string& tip,
                          const std::set<std::string>& branch_heads, const std::vector<std::string>& metrics,
                          std::size_t limit);
  Status add_points(HeadSeries& series, const std::string& tree, const Job& job,
                    const std::vector<std::string>& metrics);

  TreeRepos& m_trees;
  storage::QueueStore& m_queue;
  storage::SampleStore& m_samples;
};

// A shift the detector proposes: bisect (good, bad]; the most likely step is (step_good, step_bad].
struct Candidate {
  std::string metric;
  std::string good, bad;
  std::string step_good, step_bad;
  bisect::ChangePoint point;
};

// Change points (gate: the job threshold) of every alerting metric, newest first.
std::vector<Candidate> find_candidates(const HeadSeries& series, const Job& job);

// True when `candidate` needs no confirmation: its range overlaps a detection being confirmed or confirmed,
// or a bisection, of the same tree/branch/job; or it lies inside a range whose confirmation failed. A range
// across a rewrite (good not an ancestor of bad) counts as the new history's part: from the merge base.
Result<bool> is_covered(TreeRepos& trees, storage::DetectionStore& detections, storage::BisectionStore& bisections,
                        const std::string& tree, const std::string& branch, const Job& job, const Candidate& candidate);

} // namespace bisectd::daemon::watch
