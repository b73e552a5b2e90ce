#pragma once
// Watching trees: poll each tree's branches, measure every new head, and when a head differs from the last
// measured one beyond the job's threshold, confirm with interleaved reruns of both before opening a bisection.

#include "daemon/bisection_driver.hpp"
#include "daemon/context.hpp"

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
  Status start_confirmation(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                            const storage::HeadRow& head, double change, double p_value);
  Status advance_detection(const storage::DetectionRow& detection);
  // Queues interleaved good/bad visits, about `per_side` runs each; returns the runs per side queued.
  Result<int> enqueue_confirmation(const storage::DetectionRow& detection, const Job& job, int per_side);
  Result<std::vector<double>> values(const Job& job, const std::vector<std::int64_t>& requests,
                                     const std::string& commit);
  Status enqueue_watch(const storage::TreeRow& tree, const Job& job, const std::string& commit);

  Context& m_context;
  BisectionDriver& m_bisections;
  std::map<std::string, std::int64_t> m_last_poll;
};

} // namespace bisectd::daemon
