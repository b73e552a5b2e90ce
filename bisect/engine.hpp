#pragma once
// The bisection engine's one entry point: samples in, next step out. Pure (std + base only), no logging, no
// state between calls: the daemon stores samples and calls next_step() again after every completed run, so a
// restart loses nothing. Two methods sit behind it: BCB (Bayesian change-point bisection, the default, see
// docs/bisect-sim.md) and classic (fixed runs per commit, LKP non-overlap
// verdicts, midpoint of the remaining range), kept as a baseline and fallback.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::bisect {

enum class Direction { higher_is_better, lower_is_better };
enum class Method { bcb, classic };

struct Candidate {                    // chain[0] = the known-good commit, chain.back() = the known-bad commit
  std::string id;                     // sha (opaque here)
  double prior = 1.0;                 // relative prior mass of "the change is at this commit" (0 = irrelevant)
  bool skipped = false;               // unbuildable/unbootable: never picked, keeps its prior mass
  std::optional<std::size_t> same_as; // identical build to another candidate: shares its samples
};

struct Sample {
  std::size_t commit;        // index into chain
  double value;              // raw metric value (> 0); the engine works on log(value)
  std::string boot;          // runs of one boot/visit share its offset
  std::int64_t seq;          // global order in time (for drift blocking)
  bool verification = false; // taken for the verification phase
};

struct CostModel {
  double build_s = 600, boot_s = 180, run_s = 300;
};

struct Settings {
  Method method = Method::bcb;
  Direction direction = Direction::higher_is_better;
  double threshold = 0.02;              // relative shift the job cares about
  double delta = 0.01;                  // stop when P(culprit) >= 1 - delta
  std::optional<double> noise;          // prior relative run-to-run sigma from history (e.g. 0.03), if known
  int noise_runs = 10;                  // how many runs of history `noise` rests on (its prior weight, bcb)
  std::optional<double> expected_shift; // relative shift the alert measured (e.g. -0.065), if known (bcb prior)
  int runs_per_visit = 3;               // classic: fixed runs per commit; bcb: runs per pick (may choose fewer/more)
  int max_runs = 400, max_builds = 60;  // budget; then report the credible set
  int idle_machines = 1;                // K: how many picks to return
  std::vector<std::size_t> in_flight;   // commits with runs queued/running now (bcb: search waits for the round)
  std::vector<std::size_t> built;       // commits whose build exists already (cheap to run)
  std::vector<std::size_t> installed;   // commits booted on an idle machine now (a rerun costs run_s only)
  CostModel cost;
  // A build slot builds the likely next commits while the machines run (daemon/prebuilder), so a new commit's
  // build is off the machines' critical path: the chooser charges it boot and runs only. False: its build too.
  bool prebuild = true;
  int verification_pairs = 10; // interleaved culprit/parent pairs after stopping (0 = off)
};

struct Problem {
  std::vector<Candidate> chain;
  std::vector<Sample> samples;
  Settings settings;
};

enum class Verdict { need_runs, found, ambiguous, no_change, budget_exhausted };

struct Pick {
  std::size_t commit;
  int runs;
  bool verification = false;
  bool fresh_boot = false; // reboot even if the commit is installed: a new boot offset is worth its boot time
};

struct Step {
  Verdict verdict = Verdict::need_runs;
  std::vector<Pick> picks;            // what to run next (need_runs), distinct commits, at most idle_machines
  std::optional<std::size_t> culprit; // index of the first bad commit (found), or the most likely one
  double p_culprit = 0;
  std::vector<std::size_t> credible_set; // smallest set with mass >= 0.95 (or the candidates only skips separate)
  double shift = 0, shift_low = 0, shift_high = 0; // relative change culprit vs parent, 95% interval
  std::vector<double> posterior; // P(first bad = i) for i in chain (0 for chain[0]); no-change mass separate
  double p_no_change = 0;
  std::vector<std::string> trace; // human-readable reasoning, one line per decision
  int runs_used = 0;              // samples counted against max_runs (all samples given)
  int builds_used = 0;            // distinct builds that have samples (same_as groups count once)
};

// Pure: the next step is recomputed from the samples alone, so a restart loses nothing.
// An invalid problem (chain shorter than 2, sample index out of range, value <= 0) gives verdict ambiguous
// with the reason in the trace and no picks.
Step next_step(const Problem& problem);

// Lower-case names for reports and JSON ("need_runs", "found", ...; "bcb", "classic").
const char* to_string(Verdict verdict);
const char* to_string(Method method);

} // namespace bisectd::bisect
