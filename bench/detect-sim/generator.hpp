#pragma once
// Synthetic benchmark-like series: a level with relative steps at random places, a few noisy runs per commit.

#include "bisect/detect.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace bisectd::bench {

enum class NoiseKind { gaussian, bimodal, outliers };
inline constexpr NoiseKind k_noise_kinds[] = {NoiseKind::gaussian, NoiseKind::bimodal, NoiseKind::outliers};
std::string_view to_string(NoiseKind kind);

// Deterministic generator (mt19937_64 is fully specified; the distributions are ours, not the library's).
class Rng {
public:
  explicit Rng(std::uint64_t seed);
  double uniform();                    // [0, 1)
  double uniform(double lo, double hi);
  int uniform_int(int lo, int hi);     // inclusive
  double normal();

private:
  std::uint64_t m_state[4];
  std::uint64_t next();
};

struct TrueStep {
  std::size_t index = 0;  // first commit after the step
  double relative = 0;    // level ratio - 1
};

struct SimSeries {
  std::vector<bisect::SeriesPoint> points;
  std::vector<TrueStep> steps;
  double run_sigma = 0;   // relative per-run sigma of the generator
};

struct GeneratorOptions {
  int min_commits = 200, max_commits = 1000;
  double min_sigma = 0.01, max_sigma = 0.05;
  double min_step = 0.01, max_step = 0.10;
  double no_step_share = 0.2;  // series without any step
  int runs_per_commit = 3;
  int min_step_spacing = 20;   // commits between two steps
  int edge_margin = 15;        // no step this close to either end
  double commit_jitter = 0.0;  // relative sigma of a per-commit level offset shared by its runs (0 = none)
};

// One series of noise `kind`, fully determined by `seed`.
SimSeries generate_series(NoiseKind kind, std::uint64_t seed, const GeneratorOptions& options);

} // namespace bisectd::bench
