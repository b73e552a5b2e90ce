#pragma once
// Scoring detections against the true steps of a synthetic series.

#include "generator.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace bisectd::bench {

inline constexpr long k_match_margin = 5; // a detection within ±5 commits of a true step finds it

// Buckets of |step| / sigma_hat for the recall breakdown: [0,1) [1,2) [2,3) [3,5) [5,inf).
inline constexpr std::array<double, 5> k_effect_edges = {0.0, 1.0, 2.0, 3.0, 5.0};

struct Score {
  std::size_t series = 0, commits = 0, null_commits = 0;
  std::size_t detections = 0, true_positives = 0, false_positives = 0, null_false_positives = 0;
  std::size_t near_false_positives = 0; // unmatched detections 6..20 commits from a true step (mislocated)
  std::size_t steps = 0, found = 0;
  std::size_t big_steps = 0, big_found = 0;         // |step| >= 3 sigma_hat
  std::size_t run_big_steps = 0, run_big_found = 0; // |step| >= 3 run sigma of the generator
  std::array<std::size_t, 5> bucket_steps{}, bucket_found{};

  double precision() const;
  double recall() const;
  double f1() const;
  double false_alarms_per_1000() const;      // unmatched detections over all series
  double null_false_alarms_per_1000() const; // detections on series without any step
  double big_recall() const;
  double run_big_recall() const;
};

// sigma_hat of the series as the detector sees it: diff_sigma of the per-commit medians, relative to the
// median level.
double relative_sigma_hat(const SimSeries& series);

// Adds one series: detections matched one-to-one to true steps, nearest pairs first, within the margin.
void add_to_score(Score& score, const SimSeries& series, std::vector<std::size_t> detections);

} // namespace bisectd::bench
