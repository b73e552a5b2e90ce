#pragma once
// Drives bisections: every tick, each running bisection's next step is recomputed from the stored samples by the
// pure engine (bisect::next_step), and its picks become queued test requests; a finished search recurses into a
// merge's branch, verifies the culprit and stores the result with its report mail. A restart loses nothing.

#include "bisect/engine.hpp"
#include "daemon/bisection/build_equivalence.hpp"
#include "daemon/bisection/prebuilder.hpp"
#include "daemon/bisection/priors.hpp"
#include "daemon/core/bisection_starter.hpp"
#include "daemon/core/job_catalog.hpp"
#include "daemon/core/lab_view.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/core/tree_repos.hpp"
#include "daemon/core/wake.hpp"
#include "daemon/reporting/reporter.hpp"
#include "daemon/verify/verifier.hpp"
#include "storage/bisection_store.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"
#include "storage/tree_store.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::daemon::bisection {

struct DriverStores {
  storage::BisectionStore& bisections;
  storage::QueueStore& queue;
  storage::SampleStore& samples;
  storage::TreeStore& trees;
};

// The parts the driver asks: history and jobs, the lab's size, the priors, identical builds, the prebuilder
// (null: no prebuilds), the verifier and the reporter.
struct DriverParts {
  TreeRepos& repos;
  JobCatalog& jobs;
  const LabView& lab;
  Priors& priors;
  BuildEquivalence& equivalence;
  Prebuilder* prebuilder;
  verify::Verifier& verifier;
  reporting::Reporter& reporter;
};

class Driver final : public BisectionStarter {
public:
  Driver(DriverStores stores, DriverParts parts, Wake wake)
      : m_stores(stores), m_parts(parts), m_wake(std::move(wake)) {}

  Result<std::int64_t> start(const BisectionStart& start) override;

  // Advances every running bisection (io thread).
  void advance_all();

private:
  // False once the bisection has ended (an operator's cancel from an API thread while its step was computed).
  bool still_running(std::int64_t id);
  // What one tick of a bisection works with.
  struct Tick {
    storage::BisectionRow b;
    std::shared_ptr<const Job> job;
    std::vector<std::string> chain;
    bisect::Problem problem;
    bisect::Step step;
    std::int64_t reused = 0;      // samples the engine was handed that other requests measured (the alert's, ...)
    std::size_t borrowed_tip = 0; // merged branch: the mainline's samples standing in for the unmeasured branch tip
  };
  // In a merged branch's search, the mainline commits the first phase judged, whose samples describe the branch's
  // ends: the merge and those after it read as the tip does (bad), those before it as the merge base does (good,
  // when the base lies on the searched mainline).
  struct StandIns {
    std::string key; // the range they were found for
    std::vector<std::string> tip, base;
  };
  // The verdict of verification for the step's culprit.
  enum class Checked { pending, excluded, verified };

  Status advance(storage::BisectionRow b);
  // The searched chain of a bisection (cached; recomputed from git when the range changes).
  Result<std::vector<std::string>> chain(const storage::BisectionRow& b);
  Result<bisect::Problem> problem_for(const storage::BisectionRow& b, const Job& job,
                                      const std::vector<std::string>& chain, std::int64_t& reused);
  Status add_candidates(const Job& job, const storage::BisectionRow& b, const std::vector<std::string>& chain,
                        bisect::Problem& problem, std::int64_t& reused);
  // Adds the mainline phase's samples of the commits it judged to a merged branch's ends (the base's first, the
  // tip's last, counted in Tick::borrowed_tip); nothing outside a merged branch's search.
  Status add_merge_evidence(Tick& t);
  // True when the step is about to take confirm pairs for a merge whose branch the search will move into.
  Result<bool> branch_verifies(const Tick& t);
  Result<StandIns> stand_ins(const storage::BisectionRow& b, const std::vector<std::string>& chain);
  // Fills the row's cost: every run, build and boot its own requests caused, and the runs of others it reused.
  Status count_cost(Tick& t);
  void apply_settings(const storage::BisectionRow& b, const Job& job, int open_requests, bisect::Problem& problem);
  // Queues the step's picks, except commits with runs in flight.
  Status enqueue_picks(const Tick& t);
  Status finish(Tick& t);
  // True when the culprit is a merge and the search moved into the merged branch.
  Result<bool> recurse_into_merge(storage::BisectionRow& b, const std::string& culprit);
  Result<Checked> check_culprit(Tick& t, std::optional<verify::Verification>& verification);
  reporting::Conclusion conclude(Tick& t, const std::optional<verify::Verification>& verification);
  void record_comparison(Tick& t, const reporting::Conclusion& conclusion);
  Status store_result(Tick& t, reporting::Conclusion conclusion);
  Status fail(storage::BisectionRow& b, const std::string& why);

  DriverStores m_stores;
  DriverParts m_parts;
  Wake m_wake;
  std::map<std::int64_t, std::pair<std::string, std::vector<std::string>>> m_chains; // id -> (range key, chain)
  // The last error of each bisection's step, logged when it first occurs, not again every tick while it lasts (a full
  // disk or a locked store fails every step the same way).
  std::map<std::int64_t, std::string> m_failing;
  std::set<std::pair<std::int64_t, std::string>> m_relevance_told; // (id, range) whose event was written
  std::map<std::int64_t, StandIns> m_stand_ins;                    // id -> the merged branch's stand-ins
};

// What the culprit is compared with: its first parent, or when that (and maybe more) was left out as irrelevant
// to the build or verified implausible (prior 0: the same binary), the nearest predecessor that counts; and when
// that one builds identically to an earlier commit (same_as), the commit whose build and samples it shares.
std::size_t reference_parent(const std::vector<bisect::Candidate>& chain, std::size_t culprit);

// The chain index whose build (and samples) commit `i` shares: `i` itself unless it builds identically to an
// earlier commit (same_as, followed to its end).
std::size_t build_root(const std::vector<bisect::Candidate>& chain, std::size_t i);

// commits[i] first, then every other commit of the chain that shares its build.
std::vector<std::string> same_build(const std::vector<std::string>& commits,
                                    const std::vector<bisect::Candidate>& chain, std::size_t i);

} // namespace bisectd::daemon::bisection
