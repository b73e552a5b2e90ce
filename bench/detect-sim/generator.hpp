#pragma once
// Synthetic benchmark-like series: a level with relative steps at random places, a few noisy runs per commit,
// and one lab effect per kind (docs/detect-sim.md says which effects count as changes: only the steps do).

#include "bisect/detect.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace bisectd::bench {

enum class NoiseKind {
  gaussian,
  bimodal,
  outliers,      // run noise only
  heavy_tails,   // Student-t (3 dof) runs
  single_value,  // one run per commit (no replicates)
  noisy_boots,   // two boots of two runs per commit; 8% of boots scatter 6x more
  drift,         // slow random walk of the lab level
  machine_swap,  // stretches measured by other boxes of the group, each with its own offset
  seasonal,      // periodic load (sine of the lab level)
  variance_step, // run noise grows 2.5x at one commit, level unchanged
  outage,        // 1-3 bursts of 1-4 commits whose runs all lose 20-60%
  ramp,          // 1-2 gradual level changes of 3-10% spread over 30-100 commits
};
inline constexpr NoiseKind k_noise_kinds[] = {NoiseKind::gaussian,      NoiseKind::bimodal,      NoiseKind::outliers,
                                              NoiseKind::heavy_tails,   NoiseKind::single_value, NoiseKind::noisy_boots,
                                              NoiseKind::drift,         NoiseKind::machine_swap, NoiseKind::seasonal,
                                              NoiseKind::variance_step, NoiseKind::outage,       NoiseKind::ramp};
std::string_view to_string(NoiseKind kind);

// Deterministic generator (mt19937_64 is fully specified; the distributions are ours, not the library's).
class Rng {
public:
  explicit Rng(std::uint64_t seed);
  double uniform(); // [0, 1)
  double uniform(double lo, double hi);
  int uniform_int(int lo, int hi); // inclusive
  double normal();

private:
  std::uint64_t m_state[4];
  std::uint64_t next();
};

struct TrueStep {
  std::size_t index = 0; // first commit after the step
  double relative = 0;   // level ratio - 1
};

struct SimSeries {
  std::vector<bisect::SeriesPoint> points;
  std::vector<TrueStep> steps;
  double run_sigma = 0; // relative per-run sigma of the generator
};

struct GeneratorOptions {
  int min_commits = 200, max_commits = 1000;
  double min_sigma = 0.01, max_sigma = 0.05;
  double min_step = 0.01, max_step = 0.10;
  double no_step_share = 0.2; // series without any step
  int runs_per_commit = 3;
  int min_step_spacing = 20;  // commits between two steps
  int edge_margin = 15;       // no step this close to either end
  double commit_jitter = 0.0; // relative sigma of a per-commit level offset shared by its runs (0 = none)
};

// One series of noise `kind`, fully determined by `seed`.
SimSeries generate_series(NoiseKind kind, std::uint64_t seed, const GeneratorOptions& options);

} // namespace bisectd::bench
