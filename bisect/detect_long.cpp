// The long-segment pass: binary segmentation of a change in mean inside the segments between the change points
// the windowed passes found. A small step between two long stable stretches is plain over the whole stretches
// (a 1 sigma step between 300 points either side is ~12 standard errors) but not in 50-point windows. A slow
// drift or a ramp also moves whole stretches apart: a split is kept only when a step explains its two segments
// clearly better than a random-walk level does, no ramp fits its surroundings better, and it passes the
// windowed gates' abruptness tests.

#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace bisectd::bisect::detail {

namespace {

constexpr double k_prior_diffs = 16; // a side's noise is shrunk towards the series' sigma by 16 pseudo-differences
// Tuned with detect-sim (single_value against drift and ramp false alarms, default seed, confirmed on 4242):
constexpr double k_penalty_per_log_n = 3.0; // a split's squared z >= 3 log n (BIC-like; 2-3 gave the same F1)
// Likelihood ratio of a step at the split over a random-walk level on its two segments: true steps between
// stable stretches gave 13-28, splits of slow drifts 3-12 (10: drift false alarms +20 %, 16: single_value F1
// -0.017).
constexpr double k_step_over_walk = 13.0;
// Ramp advantage (detect_ramp.cpp, in sigma^2) from which a split is a ramp, with no exception for a jump on
// top of it: far stricter than the windowed gate (5, unless a jump still explains 6), because a small step
// seen only over long stretches cannot show that jump. On detect-sim's ramp kind (default seed, 500 series) the
// pass added 18 false alarms at 3 with the jump exception, 14 at 3 without it, 11 at 1 (single_value: 49, 47 and
// 45 steps found).
constexpr double k_ramp_advantage = 1.0;
constexpr std::size_t k_ramp_window = 50;
constexpr std::size_t k_min_ramp = 16;

// Prefix sums of the clipped points and of their squared successive differences: the mean and the noise of
// any stretch in O(1).
class Stretches {
public:
  Stretches(std::span<const double> y, double sigma)
      : m_sum(y.size() + 1, 0.0), m_diff2(y.size() + 1, 0.0), m_sigma2(sigma * sigma) {
    double prev = 0;
    const std::vector<double> clipped = clip_to_running_median(y, sigma);
    for (std::size_t t = 0; t < y.size(); ++t) {
      const double z = clipped[t];
      m_sum[t + 1] = m_sum[t] + z;
      m_diff2[t + 1] = m_diff2[t] + (t > 0 ? (z - prev) * (z - prev) : 0.0);
      prev = z;
    }
  }
  double mean(std::size_t a, std::size_t b) const { return (m_sum[b] - m_sum[a]) / static_cast<double>(b - a); }
  // Noise variance of [a, b) from its successive differences (a missed step there adds one difference only),
  // shrunk towards the series' sigma^2 so that a short stretch that happens to be calm does not look exact.
  double noise2(std::size_t a, std::size_t b) const {
    const double diffs = static_cast<double>(b - a - 1);
    return (m_diff2[b] - m_diff2[a + 1] + 2.0 * k_prior_diffs * m_sigma2) / (2.0 * (diffs + k_prior_diffs));
  }
  // Squared Welch z of the difference of the means of [a, t) and [t, b), each side with its own noise.
  double split_z2(std::size_t a, std::size_t t, std::size_t b) const {
    const double d = mean(t, b) - mean(a, t);
    const double var = noise2(a, t) / static_cast<double>(t - a) + noise2(t, b) / static_cast<double>(b - t);
    return var > 0.0 ? d * d / var : 0.0;
  }

private:
  std::vector<double> m_sum, m_diff2;
  double m_sigma2;
};

} // namespace

std::vector<std::size_t> long_splits(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma,
                                     std::size_t min_side, double penalty) {
  std::vector<std::size_t> out;
  if (sigma <= 0.0 || min_side < 2) {
    return out;
  }
  const Stretches s(y, sigma);
  std::vector<std::pair<std::size_t, std::size_t>> todo;
  for (std::size_t j = 0; j <= cps.size(); ++j) {
    todo.emplace_back(j == 0 ? 0 : cps[j - 1], j == cps.size() ? y.size() : cps[j]);
  }
  // Each split leaves two shorter segments, each at least min_side long: at most n / min_side splits.
  while (!todo.empty()) {
    const auto [a, b] = todo.back();
    todo.pop_back();
    if (b < a + 2 * min_side) {
      continue;
    }
    std::size_t best = 0;
    double best_z2 = 0;
    for (std::size_t t = a + min_side; t + min_side <= b; ++t) {
      const double z2 = s.split_z2(a, t, b);
      if (z2 > best_z2) {
        best_z2 = z2, best = t;
      }
    }
    if (best_z2 < penalty) {
      continue;
    }
    out.push_back(best);
    todo.emplace_back(a, best);
    todo.emplace_back(best, b);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

std::size_t segment_lo(const std::vector<std::size_t>& cps, std::size_t j) { return j == 0 ? 0 : cps[j - 1]; }
std::size_t segment_hi(const std::vector<std::size_t>& cps, std::size_t j, std::size_t n) {
  return j + 1 == cps.size() ? n : cps[j + 1];
}

// Gate of a long-pass change point j: the whole segments either side for the levels and the rank test, then
// step against random walk and against ramp.
Gate long_gate(const PreparedSeries& p, const std::vector<std::size_t>& cps, std::size_t j, double sigma,
               const DetectOptions& options) {
  const std::size_t lo = segment_lo(cps, j), hi = segment_hi(cps, j, p.values.size()), pos = cps[j];
  DetectOptions whole = options;
  whole.k_sigma = options.long_k_sigma;
  Gate g = evaluate_gate(p, lo, pos, hi, sigma, whole, p.values.size());
  if (!g.pass) {
    return g;
  }
  const std::span<const double> y = std::span<const double>(p.values).subspan(lo, hi - lo);
  const double step = constant_level_2ll(y, {pos - lo}, sigma) - constant_level_2ll(y, {}, sigma);
  g.pass = step - local_level_lr(y, {}, sigma) >= k_step_over_walk;
  if (g.pass) {
    const std::size_t a = pos >= k_ramp_window ? pos - k_ramp_window : 0;
    const std::size_t b = std::min(p.values.size(), pos + k_ramp_window);
    const RampTest ramp = ramp_test(std::span<const double>(p.values).subspan(a, b - a), pos - a, sigma, k_min_ramp);
    g.pass = ramp.advantage < k_ramp_advantage;
  }
  return g;
}

// Which long-pass change point to drop next, or -1: the weakest failing one (highest p); when only change points
// of the windowed passes fail (a split came too near), the long-pass one nearest to such a change point.
long next_to_drop(const std::vector<std::size_t>& cps, const std::vector<bool>& is_long,
                  const std::vector<Gate>& gates) {
  long drop = -1;
  for (std::size_t j = 0; j < cps.size(); ++j) {
    if (is_long[j] && !gates[j].pass &&
        (drop < 0 || gates[j].p_value > gates[static_cast<std::size_t>(drop)].p_value)) {
      drop = static_cast<long>(j);
    }
  }
  for (std::size_t j = 0; j < cps.size() && drop < 0; ++j) {
    if (is_long[j] || gates[j].pass) {
      continue;
    }
    const bool left = j > 0 && is_long[j - 1], right = j + 1 < cps.size() && is_long[j + 1];
    if (left && (!right || cps[j] - cps[j - 1] <= cps[j + 1] - cps[j])) {
      drop = static_cast<long>(j - 1);
    } else if (right) {
      drop = static_cast<long>(j + 1);
    }
  }
  return drop;
}

} // namespace

void add_long_changes(const PreparedSeries& p, double sigma, const DetectOptions& options,
                      std::vector<std::size_t>& cps, std::vector<Gate>& gates) {
  const std::size_t n = p.values.size();
  const auto min_side = static_cast<std::size_t>(2 * options.min_segment);
  const double penalty = k_penalty_per_log_n * std::log(static_cast<double>(n));
  const std::vector<std::size_t> added = long_splits(p.values, cps, sigma, min_side, penalty);
  if (added.empty()) {
    return;
  }
  std::vector<std::size_t> all;
  std::vector<bool> is_long;
  for (std::size_t i = 0, k = 0; i < cps.size() || k < added.size();) {
    const bool take_long = i == cps.size() || (k < added.size() && added[k] < cps[i]);
    all.push_back(take_long ? added[k++] : cps[i++]);
    is_long.push_back(take_long);
  }
  std::vector<Gate> all_gates(all.size());
  // Each round drops one long-pass change point; the last round finds none left to drop.
  for (std::size_t round = 0; round <= added.size(); ++round) {
    for (std::size_t j = 0; j < all.size(); ++j) {
      all_gates[j] = is_long[j] ? long_gate(p, all, j, sigma, options)
                                : evaluate_gate(p, segment_lo(all, j), all[j], segment_hi(all, j, n), sigma, options);
    }
    const long drop = next_to_drop(all, is_long, all_gates);
    if (drop < 0) {
      cps = std::move(all);
      gates = std::move(all_gates);
      return;
    }
    all.erase(all.begin() + drop);
    is_long.erase(is_long.begin() + drop);
  }
}

} // namespace bisectd::bisect::detail
