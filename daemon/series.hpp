#pragma once
// A watched branch's history as benchmark series: the measured heads of (tree, job, machine group) in the
// first-parent order of the newest head, with every metric's samples; the change-point detector's proposals
// over them; and whether a proposed range is already accounted for by a detection or a bisection.

#include "bisect/detect.hpp"
#include "daemon/context.hpp"

#include <map>
#include <string>
#include <vector>

namespace bisectd::daemon {

struct HeadSeries {
  std::vector<std::string> commits;                                 // measured heads, oldest first
  std::map<std::string, std::vector<bisect::SeriesPoint>> metrics;  // metric -> points parallel to `commits`
};

// The heads measured by watch requests of (tree, job, job.machine_group) that are ancestors of `tip` (the
// newest measured head), oldest first, at most the newest `limit`; each point carries every sample of its
// commit measured in that group (watch, confirm and bisect runs alike: samples are shared), normal builds only.
Result<HeadSeries> load_series(Context& context, const std::string& tree, const Job& job, const std::string& tip,
                               std::size_t limit = 200);

// True when a watch request of (tree, job, job.machine_group) measured `commit` (it is then in the series).
Result<bool> is_watched(storage::Store& store, const std::string& tree, const Job& job, const std::string& commit);

// A shift the detector proposes: bisect (good, bad]; the most likely step is (step_good, step_bad].
struct Candidate {
  std::string metric;
  std::string good, bad;
  std::string step_good, step_bad;
  bisect::ChangePoint point;
};

// The metrics that may open bisections: the primary, then those under metrics.watch (no duplicates).
std::vector<std::string> alerting_metrics(const Job& job);

// Change points (gate: the job threshold) of every alerting metric, newest first.
std::vector<Candidate> find_candidates(const HeadSeries& series, const Job& job);

// True when `candidate` needs no confirmation: its range overlaps a detection being confirmed or confirmed,
// or a bisection, of the same tree/branch/job; or it lies inside a range whose confirmation failed.
Result<bool> is_covered(Context& context, const std::string& tree, const std::string& branch, const Job& job,
                        const Candidate& candidate);

} // namespace bisectd::daemon
