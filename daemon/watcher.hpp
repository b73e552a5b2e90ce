#pragma once
// Watching trees: poll each tree's branches and measure every new head. Two detectors propose shifts:
// (a) a head differs from the last measured one beyond the job's threshold (a big jump, seen at once);
// (b) the change-point detector over the series of measured heads (daemon/series.hpp) finds a smaller shift
// that built up over several pushes. Either is confirmed with interleaved reruns of both ends on one machine
// before a bisection is opened; at most one detection per branch is being confirmed at a time.

#include "daemon/bisection_driver.hpp"
#include "daemon/context.hpp"
#include "daemon/series.hpp"

#include <map>
#include <string>
#include <vector>

namespace bisectd::daemon {

class Watcher {
public:
  Watcher(Context& context, BisectionDriver& bisections) : m_context(context), m_bisections(bisections) {}

  // Trees whose poll interval has passed (io thread); marks them polled.
  std::vector<storage::TreeRow> due_trees(std::int64_t now);
  // Records fetched heads and queues a measurement of each new one (io thread).
  void on_heads(const storage::TreeRow& tree, const std::map<std::string, std::string>& heads);
  // Compares measured heads, runs confirmations, opens bisections (io thread).
  void advance();

private:
  Status advance_branch(const storage::TreeRow& tree, const std::string& branch, const Job& job);
  Status compare_heads(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                       const storage::HeadRow& head);
  // Runs the change-point detector once per new baseline; queues a confirmation for the newest new shift.
  Status check_series(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                      const std::string& tip);
  Result<bool> branch_confirming(const std::string& tree, const std::string& branch, const std::string& job);
  Status start_confirmation(const storage::DetectionRow& proposal, const Job& job);
  Status advance_detection(const storage::DetectionRow& detection);
  Status open_bisection(const storage::DetectionRow& detection, const bisect::ShiftTest& test,
                        std::size_t runs);
  // Queues interleaved good/bad visits, about `per_side` runs each; returns the runs per side queued.
  Result<int> enqueue_confirmation(const storage::DetectionRow& detection, const Job& job, int per_side);
  // Runs per side for a first confirmation round: the noise model of the metric's series decides, >= 5.
  int confirm_runs(const storage::DetectionRow& detection, const Job& job);
  Result<std::vector<double>> values(const Job& job, const std::string& metric,
                                     const std::vector<std::int64_t>& requests, const std::string& commit);
  Status enqueue_watch(const storage::TreeRow& tree, const Job& job, const std::string& commit);

  Context& m_context;
  BisectionDriver& m_bisections;
  std::map<std::string, std::int64_t> m_last_poll;
  std::map<std::string, std::string> m_series_checked; // "tree\nbranch" -> baseline the detector last saw
};

} // namespace bisectd::daemon
