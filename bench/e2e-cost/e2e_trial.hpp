#pragma once
// One whole bisection through the daemon's real driver (daemon::bisection::Driver, with the real CulpritVerifier)
// on an in-memory store and history (tests/fakes), against a lab simulated from bisect-sim's world: the same
// culprit, noise models and common random numbers. Every run the bisection caused is counted by phase.

#include "bisect-sim/sim_world.hpp"

#include <cstdint>

namespace bisectd::e2e {

// The runs of one bisection, by what asked for them. The bisection's own runs are `total()`; the alert's runs it
// was handed (stored before it opened, by requests of no bisection) are `reused`, shown apart.
struct TrialCost {
  bool correct = false;  // found the world's culprit
  bool finished = false; // ended (found, not found or failed) within the tick bound
  std::int64_t reused = 0;
  std::int64_t endpoint = 0;     // mainline phase: the search's runs on the good and bad commits
  std::int64_t search = 0;       // mainline phase: the search's runs on the commits between
  std::int64_t verification = 0; // confirm pairs, revert and layout runs, in every phase
  std::int64_t pairs = 0;        // of which the engine's confirm pairs (the merge's and the culprit's)
  std::int64_t merge_phase = 0;  // the merged branch's search (its endpoints included)
  std::int64_t builds = 0, boots = 0;
  std::int64_t stored_runs = 0; // the bisection's `runs` as storage counts them (must equal total())
  [[nodiscard]] std::int64_t total() const { return endpoint + search + verification + merge_phase; }
};

struct TrialOptions {
  bool revert = true;   // the job's revert check (the daemon's default)
  int max_ticks = 2000; // driver ticks before the trial is given up as unfinished
};

// Runs the bisection of `world` (alert confirmation first, as the watcher does) to its end.
TrialCost run_trial(const sim::World& world, const TrialOptions& options);

} // namespace bisectd::e2e
