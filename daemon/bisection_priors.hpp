#pragma once
// What the job's history tells a bisection before (and while) it runs: the metric's run-to-run noise from the
// watched series, the shift the watcher's confirmed alert measured, and this lab's build/boot/run costs.

#include "bisect/engine.hpp"
#include "daemon/context.hpp"

#include <map>
#include <string>
#include <vector>

namespace bisectd::daemon {

// Fills settings.noise/noise_runs (unless the job fixes `bisect.noise`), settings.expected_shift (bisections
// opened by a confirmed detection) and settings.cost. Missing history leaves the engine's defaults.
void apply_history(Context& context, const storage::BisectionRow& b, const Job& job, bisect::Settings& settings);

// Paths each commit changed (against its first parent), cached across ticks: a commit's diff never changes.
using ChangedPathsCache = std::map<std::string, std::vector<std::string>>;

// Kernel recipe: gives prior 0 (never built) to the chain's commits that touch no source the job's builds of
// the endpoints compiled (kbuild's .cmd files, kbuild/relevance.hpp) nor any kbuild machinery. Keeps every prior
// when nothing is known yet or when no commit would be left. Returns how many commits it set to 0.
std::size_t apply_relevance(Context& context, const storage::BisectionRow& b, const Job& job,
                            std::vector<bisect::Candidate>& chain, ChangedPathsCache& cache);

} // namespace bisectd::daemon
