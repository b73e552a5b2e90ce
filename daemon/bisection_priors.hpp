#pragma once
// What the job's history tells a bisection before (and while) it runs: the metric's run-to-run noise from the
// watched series, the shift the watcher's confirmed alert measured, and this lab's build/boot/run costs.

#include "bisect/engine.hpp"
#include "daemon/context.hpp"

namespace bisectd::daemon {

// Fills settings.noise/noise_runs (unless the job fixes `bisect.noise`), settings.expected_shift (bisections
// opened by a confirmed detection) and settings.cost. Missing history leaves the engine's defaults.
void apply_history(Context& context, const storage::BisectionRow& b, const Job& job, bisect::Settings& settings);

} // namespace bisectd::daemon
