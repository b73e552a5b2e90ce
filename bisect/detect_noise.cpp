// Per-metric noise model learned from a series' history.

#include "bisect/detect.hpp"
#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>

namespace bisectd::bisect {

namespace {

constexpr double k_heavy_tail_sigmas = 5.0;
constexpr double k_heavy_tail_fraction = 0.01;
constexpr double k_bimodal_min_share = 0.10;
constexpr double k_bimodal_ashman_d = 3.2; // one Gaussian split in two gives D ~ 2.65
constexpr int k_max_runs = 10000;

// Variance of the median of r standard normal runs (Monte Carlo, 2e5 draws), pi/(2r) beyond the table.
double median_variance_factor(int runs) {
  static constexpr double k_table[] = {1.0, 0.5, 0.449, 0.298, 0.287, 0.215, 0.210, 0.169, 0.166, 0.139};
  if (runs < 1) {
    return 1.0;
  }
  if (runs <= 10) {
    return k_table[runs - 1];
  }
  return std::numbers::pi / (2.0 * runs);
}

// Level of each prepared point: the median of its segment between detected change points.
std::vector<double> segment_levels(const std::vector<SeriesPoint>& series, const detail::PreparedSeries& p) {
  const std::vector<ChangePoint> cps = detect_change_points(series, DetectOptions{});
  std::vector<double> levels(p.values.size(), 0.0);
  std::size_t start = 0;
  std::size_t next_cp = 0;
  for (std::size_t i = 0; i <= p.values.size(); ++i) {
    const bool boundary = i == p.values.size() || (next_cp < cps.size() && p.origin[i] >= cps[next_cp].index);
    if (!boundary) {
      continue;
    }
    const double level = median(std::span<const double>(p.values).subspan(start, i - start));
    std::fill(levels.begin() + static_cast<long>(start), levels.begin() + static_cast<long>(i), level);
    start = i;
    ++next_cp;
  }
  return levels;
}

// Ashman's D of the best two-cluster split of sorted values (each cluster >= 10%); 0 when too few values.
double best_split_ashman_d(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const auto min_size = static_cast<std::size_t>(std::ceil(k_bimodal_min_share * static_cast<double>(n)));
  if (n < 20) {
    return 0.0;
  }
  std::vector<double> sum(n + 1, 0.0), sum_sq(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    sum[i + 1] = sum[i] + values[i];
    sum_sq[i + 1] = sum_sq[i] + values[i] * values[i];
  }
  double best_within = INFINITY, best_d = 0.0;
  for (std::size_t k = min_size; k + min_size <= n; ++k) {
    const auto n1 = static_cast<double>(k), n2 = static_cast<double>(n - k);
    const double m1 = sum[k] / n1, m2 = (sum[n] - sum[k]) / n2;
    const double v1 = std::max(0.0, sum_sq[k] / n1 - m1 * m1);
    const double v2 = std::max(0.0, (sum_sq[n] - sum_sq[k]) / n2 - m2 * m2);
    const double within = n1 * v1 + n2 * v2;
    if (within < best_within) {
      best_within = within;
      best_d = v1 + v2 > 0.0 ? std::abs(m2 - m1) * std::sqrt(2.0 / (v1 + v2)) : INFINITY;
    }
  }
  return best_d;
}

std::vector<double> finite_only(const std::vector<double>& values) {
  std::vector<double> out;
  std::copy_if(values.begin(), values.end(), std::back_inserter(out), [](double v) { return std::isfinite(v); });
  return out;
}

} // namespace

NoiseEstimate estimate_noise(const std::vector<SeriesPoint>& series) {
  NoiseEstimate out;
  const detail::PreparedSeries p = detail::prepare(series, true);
  out.commits = p.values.size();
  if (p.values.empty()) {
    return out;
  }
  const std::vector<double> levels = segment_levels(series, p);
  std::vector<double> relative_points, pair_diffs, run_residuals;
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    const std::vector<double> runs = finite_only(series[p.origin[i]].samples);
    out.runs += runs.size();
    if (levels[i] == 0.0) {
      continue;
    }
    const double level = std::abs(levels[i]);
    relative_points.push_back(p.values[i] / level - 1.0);
    for (std::size_t a = 0; a < runs.size(); ++a) {
      run_residuals.push_back(runs[a] / level - 1.0);
      for (std::size_t b = a + 1; b < runs.size(); ++b) {
        pair_diffs.push_back((runs[a] - runs[b]) / level);
      }
    }
  }
  out.runs_per_commit = static_cast<double>(out.runs) / static_cast<double>(out.commits);
  out.point_sigma = diff_sigma(relative_points);
  if (!pair_diffs.empty()) {
    std::vector<double> abs_diffs(pair_diffs.size());
    std::transform(pair_diffs.begin(), pair_diffs.end(), abs_diffs.begin(), [](double d) { return std::abs(d); });
    out.run_sigma = k_mad_to_sigma * median(abs_diffs) / std::sqrt(2.0);
    const double limit = k_heavy_tail_sigmas * std::sqrt(2.0) * out.run_sigma;
    const auto beyond = std::count_if(abs_diffs.begin(), abs_diffs.end(), [&](double d) { return d > limit; });
    out.heavy_tailed = static_cast<double>(beyond) > k_heavy_tail_fraction * static_cast<double>(abs_diffs.size());
  }
  const double factor = median_variance_factor(static_cast<int>(std::lround(out.runs_per_commit)));
  out.commit_sigma =
    std::sqrt(std::max(0.0, out.point_sigma * out.point_sigma - factor * out.run_sigma * out.run_sigma));
  out.bimodal = best_split_ashman_d(run_residuals) > k_bimodal_ashman_d;
  return out;
}

int NoiseEstimate::runs_for(double relative_shift) const {
  const double allowed = std::abs(relative_shift) / 3.0;
  if (allowed == 0.0) {
    return -1;
  }
  const double room = allowed * allowed - commit_sigma * commit_sigma;
  if (room <= 0.0) {
    return -1;
  }
  for (int r = 1; r <= k_max_runs; ++r) {
    if (median_variance_factor(r) * run_sigma * run_sigma <= room) {
      return r;
    }
  }
  return -1;
}

int NoiseEstimate::confirm_runs_for(double relative_shift) const {
  if (relative_shift == 0.0) {
    return -1;
  }
  const double z = normal_quantile(0.995) + normal_quantile(0.9);
  const double ratio = run_sigma / std::abs(relative_shift);
  const double needed = 2.0 * z * z * ratio * ratio / (3.0 / std::numbers::pi);
  return std::max(5, static_cast<int>(std::ceil(std::min(needed, static_cast<double>(k_max_runs)))));
}

ShiftTest confirm_shift(const std::vector<double>& before_runs, const std::vector<double>& after_runs,
                        double min_relative_change) {
  ShiftTest out;
  const std::vector<double> before = finite_only(before_runs), after = finite_only(after_runs);
  if (before.empty() || after.empty()) {
    return out;
  }
  const double b = median(before), a = median(after);
  out.relative_change = b != 0.0 ? (a - b) / std::abs(b) : 0.0;
  const RankTestResult rank = mann_whitney_u(before, after);
  out.p_value = rank.p_value;
  out.lkp_changed = lkp_changed(before, after);
  const bool agrees = (rank.u - static_cast<double>(before.size() * after.size()) / 2.0) * (a - b) > 0.0;
  out.confirmed =
    std::abs(out.relative_change) >= min_relative_change && agrees && (out.p_value < 0.01 || out.lkp_changed);
  return out;
}

} // namespace bisectd::bisect
