#pragma once
// What the job's history tells a bisection before (and while) it runs: the metric's run-to-run noise from the
// watched series, the shift the watcher's confirmed alert measured, and this lab's build/boot/run costs.

#include "bisect/engine.hpp"
#include "daemon/context.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::daemon {

// What the priors computed once and reuse on every tick (the driver advances each bisection twice a second):
// a commit's diff and a build's used sources never change, and the series' noise is read once per bisection
// range (loading the series walks the store and git).
struct HistoryCache {
  std::map<std::string, std::vector<std::string>> changed_paths; // commit -> paths changed vs its first parent
  std::map<std::string, std::set<std::string>> used_sources;     // built commit -> sources its build compiled
  std::map<std::string, std::optional<std::pair<double, int>>> noise; // "id:good..bad" -> (sigma, weight)
};

// Fills settings.noise/noise_runs (unless the job fixes `bisect.noise`), settings.expected_shift (bisections
// opened by a confirmed detection) and settings.cost. Missing history leaves the engine's defaults.
void apply_history(Context& context, const storage::BisectionRow& b, const Job& job, bisect::Settings& settings,
                   HistoryCache& cache);

// Kernel recipe: gives prior 0 (never built) to the chain's commits that touch no source the job's builds of
// the endpoints compiled (kbuild's .cmd files, kbuild/relevance.hpp) nor any kbuild machinery. Keeps every prior
// when nothing is known yet or when no commit would be left. Returns how many commits it set to 0.
std::size_t apply_relevance(Context& context, const storage::BisectionRow& b, const Job& job,
                            std::vector<bisect::Candidate>& chain, HistoryCache& cache);

} // namespace bisectd::daemon
