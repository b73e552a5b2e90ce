#pragma once
// Drives bisections: every tick, each running bisection's next step is recomputed from the stored samples by
// the pure engine (bisect/), and its picks become queued test requests. A restart therefore loses nothing.

#include "daemon/bisection_priors.hpp"
#include "daemon/build_equivalence.hpp"
#include "daemon/context.hpp"
#include "daemon/prebuilder.hpp"
#include "daemon/reporter.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace bisectd::daemon {

class BisectionDriver {
public:
  explicit BisectionDriver(Context& context) : m_context(context) {}

  // Validates the refs and opens a bisection of `metric` (empty: the job's primary); returns its id. Errors name
  // the bad ref or tree.
  Result<std::int64_t> start(const std::string& tree, const std::string& branch, const std::string& good,
                             const std::string& bad, const std::string& job_name, const std::string& origin,
                             const std::string& metric = "");

  // Advances every running bisection (io thread).
  void advance_all();

  // Builds the likely next picks while rounds wait for their runs (Daemon::start_visit tells it about visits).
  Prebuilder& prebuilder() { return m_prebuilder; }

  // The searched chain of a bisection (cached; recomputed from git when the range changes).
  Result<std::vector<std::string>> chain(const storage::BisectionRow& b);

private:
  Status advance(storage::BisectionRow b);
  Result<bisect::Problem> problem_for(const storage::BisectionRow& b, const Job& job,
                                      const std::vector<std::string>& chain);
  // Queues the step's picks, except commits in `in_flight` (chain indices with open requests).
  Status enqueue_picks(const storage::BisectionRow& b, const Job& job, const std::vector<std::string>& chain,
                       const bisect::Step& step, const std::vector<std::size_t>& in_flight);
  // True when the culprit is a merge and the search moved into the merged branch.
  Result<bool> recurse_into_merge(storage::BisectionRow& b, const std::string& culprit);
  Status finish(storage::BisectionRow& b, const Job& job, const bisect::Problem& problem, const bisect::Step& step);
  Status fail(storage::BisectionRow& b, const std::string& why);
  int machines_in(const std::string& group) const;

  Context& m_context;
  std::map<std::int64_t, std::pair<std::string, std::vector<std::string>>> m_chains; // id -> (range key, chain)
  HistoryCache m_history;
  std::set<std::pair<std::int64_t, std::string>> m_relevance_told; // (id, range) whose event was written
  BuildEquivalence m_equivalence; // commits whose builds are identical (same fingerprint) share samples
  Prebuilder m_prebuilder{m_context};
};

} // namespace bisectd::daemon
