#pragma once
// Internals of the detector shared by detect*.cpp (not a public API).

#include "bisect/detect.hpp"

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace bisectd::bisect::detail {

struct PreparedSeries {
  std::vector<double> values;       // median of each point's finite samples; points without any are skipped
  std::vector<std::size_t> origin;  // index in the input series of each value
};
PreparedSeries prepare(const std::vector<SeriesPoint>& series);

// The gates evaluated at one change point `pos` between its neighbours lo and hi (segment [lo, hi)).
struct Gate {
  bool pass = false;
  double before = 0, after = 0;  // window medians
  double relative_change = 0;
  double effect = 0;             // |after - before| / sigma
  double p_value = 1;
  std::size_t n_left = 0, n_right = 0;
};
// Compares y[max(lo, pos-W), pos) with y[pos, min(hi, pos+W)), W = options.max_window.
Gate evaluate_gate(std::span<const double> y, std::size_t lo, std::size_t pos, std::size_t hi, double sigma,
                   const DetectOptions& options);

// Split in [from, to] maximizing the standardised rank CUSUM (Pettitt's |U_t| / sd) over y[lo, hi); `current` when from > to.
std::size_t best_rank_split(std::span<const double> y, std::size_t lo, std::size_t hi, std::size_t from,
                            std::size_t to, std::size_t current);

// Splits t in [from, to] whose standardised rank CUSUM z_t over y[lo, hi) satisfies z_t^2 >= z_best^2 - drop:
// the plausible positions of the change (first and last, inclusive).
std::pair<std::size_t, std::size_t> rank_split_range(std::span<const double> y, std::size_t lo, std::size_t hi,
                                                     std::size_t from, std::size_t to, double drop);

} // namespace bisectd::bisect::detail
