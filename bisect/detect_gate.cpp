// Gate evaluation and change-point localisation for the detector.

#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <vector>

namespace bisectd::bisect::detail {

namespace {

constexpr double k_abrupt_share = 0.5;   // strict: the near jump carries at least half the windows' difference
constexpr double k_lenient_share = 0.25; // lenient (abrupt_z < 2): a quarter
constexpr double k_strict_hinge_z = 1.5; // gap between the local lines either side, in standard errors
constexpr double k_lenient_hinge_z = 1.0;

bool strict(const DetectOptions& options) { return options.abrupt_z >= 2.0; }
double abrupt_share(const DetectOptions& options) { return strict(options) ? k_abrupt_share : k_lenient_share; }
constexpr std::size_t k_machine_points = 3;
// Step against ramp (detect_ramp.cpp), in sigma^2 of residual sum of squares. On constructed series (100
// points, ramps of >= 16): noise alone gives a ramp a mean advantage of 0.5 over a true step (above 5 in ~1 %),
// ramps of 3-10 sigma over 30-60 points 12-250; a jump on top of a pure ramp's best fit explains ~3, a 3 sigma
// step inside or beside a ramp 9-30. Thresholds tuned with detect-sim (ramp false alarms against recall).
constexpr std::size_t k_min_ramp = 16;
constexpr std::size_t k_ramp_window = 50; // points either side: a ramp of up to ~100 commits seen whole
constexpr double k_ramp_advantage = 5.0;
constexpr double k_jump_given_ramp = 6.0;
constexpr std::size_t k_local_sigma_points = 16;
constexpr double k_wander_z = 3.5; // the window difference against window noise plus the level's wander

// |diff| in standard errors of the difference of the window medians when the level also wanders as a random
// walk (variance `wander` per point): each window's mean level differs from the level at the change by a walk
// of variance ~ wander * points / 3.
double wander_z(double diff, double sigma, double wander, std::size_t n_left, std::size_t n_right) {
  const auto l = static_cast<double>(n_left), r = static_cast<double>(n_right);
  const double var = sigma * sigma * 1.5708 * (1.0 / l + 1.0 / r) + wander * (l + r) / 3.0;
  return var > 0.0 ? std::abs(diff) / std::sqrt(var) : INFINITY;
}

// z-like score of the median difference between the nearest min_segment points either side of pos.
double near_jump(std::span<const double> y, std::size_t lo, std::size_t pos, std::size_t hi, double sigma,
                 const DetectOptions& options, double& jump) {
  const auto k = static_cast<std::size_t>(std::max(1, options.min_segment));
  const std::size_t a = std::max(lo, pos >= k ? pos - k : 0), b = std::min(hi, pos + k);
  const std::span<const double> left = y.subspan(a, pos - a), right = y.subspan(pos, b - pos);
  jump = median(right) - median(left);
  const double spread =
    sigma * std::sqrt(1.5708 * (1.0 / static_cast<double>(left.size()) + 1.0 / static_cast<double>(right.size())));
  return spread > 0.0 ? std::abs(jump) / spread : (jump != 0.0 ? INFINITY : 0.0);
}

// Noise sigma of the window's points (successive differences), never above the series' sigma; the series'
// sigma when the window is too short to tell.
double local_sigma(std::span<const double> window, double sigma) {
  if (window.size() < k_local_sigma_points) {
    return sigma;
  }
  const double local = diff_sigma(window);
  return local > 0.0 ? std::min(sigma, local) : sigma;
}

// Machines with >= k_machine_points values on each side of pos in [from, to) (their count in `spanning`):
// true when at least one does and each shifts the same way as `diff`, by at least half of it (median).
bool machines_agree(const PreparedSeries& p, std::size_t from, std::size_t pos, std::size_t to, double diff,
                    std::size_t& spanning) {
  std::vector<std::vector<double>> left(static_cast<std::size_t>(p.machines)), right(left.size());
  for (std::size_t i = from; i < to; ++i) {
    for (const MachineValue& v : p.by_machine[i]) {
      (i < pos ? left : right)[static_cast<std::size_t>(v.machine)].push_back(v.value);
    }
  }
  std::vector<double> shifts;
  bool same_sign = true;
  for (std::size_t m = 0; m < left.size(); ++m) {
    if (left[m].size() < k_machine_points || right[m].size() < k_machine_points) {
      continue;
    }
    const double shift = median(right[m]) - median(left[m]);
    same_sign = same_sign && shift * diff > 0.0;
    shifts.push_back(std::abs(shift));
  }
  spanning = shifts.size();
  return !shifts.empty() && same_sign && median(shifts) >= 0.5 * std::abs(diff);
}

// Level at the edge of `side` extrapolated from the medians of its halves (far half, near half): a robust
// local line. `near_end_last`: the near half is the end of the span (left side of a change).
double edge_level(std::span<const double> side, bool near_end_last) {
  const std::size_t half = side.size() / 2;
  const std::span<const double> first = side.subspan(0, half), second = side.subspan(side.size() - half, half);
  const double far = median(near_end_last ? first : second), near = median(near_end_last ? second : first);
  return 1.5 * near - 0.5 * far;
}

// Gap between the local lines either side of the change at the change, in standard errors (each edge level
// has variance 2.5 * pi/2 * sigma^2 / (points / 2)); signed like the gap. A ramp has lines that meet.
double hinge_z(std::span<const double> left, std::span<const double> right, double sigma, double& gap) {
  gap = edge_level(right, false) - edge_level(left, true);
  const double var = sigma * sigma * 2.5 * 3.1416 *
                     (1.0 / static_cast<double>(left.size() / 2 * 2) + 1.0 / static_cast<double>(right.size() / 2 * 2));
  return var > 0.0 ? gap / std::sqrt(var) : (gap != 0.0 ? INFINITY : 0.0);
}

} // namespace

Gate evaluate_gate(const PreparedSeries& p, std::size_t lo, std::size_t pos, std::size_t hi, double sigma,
                   const DetectOptions& options, std::size_t level_window) {
  const std::span<const double> y = p.values;
  const auto window = static_cast<std::size_t>(std::max(1, options.max_window));
  // The lab gates look at max_window points either side; the levels and the rank test at level_window.
  const std::size_t left_lo = std::max(lo, pos >= window ? pos - window : 0);
  const std::size_t right_hi = std::min(hi, pos + window);
  const std::size_t levels = level_window > 0 ? level_window : window;
  const std::size_t level_lo = std::max(lo, pos >= levels ? pos - levels : 0);
  const std::span<const double> left = y.subspan(level_lo, pos - level_lo);
  const std::span<const double> right = y.subspan(pos, std::min(hi, pos + levels) - pos);
  const std::span<const double> lab_left = y.subspan(left_lo, pos - left_lo);
  const std::span<const double> lab_right = y.subspan(pos, right_hi - pos);
  Gate g;
  g.n_left = left.size();
  g.n_right = right.size();
  if (left.empty() || right.empty()) {
    return g;
  }
  g.before = median(left);
  g.after = median(right);
  const double diff = g.after - g.before;
  g.relative_change = g.before != 0.0 ? diff / std::abs(g.before) : 0.0;
  g.effect = sigma > 0.0 ? std::abs(diff) / sigma : (diff != 0.0 ? INFINITY : 0.0);
  const RankTestResult rank = mann_whitney_u(left, right);
  g.p_value = rank.p_value;
  const auto min_seg = static_cast<std::size_t>(options.min_segment);
  const bool agrees = (rank.u - static_cast<double>(left.size() * right.size()) / 2.0) * diff > 0.0;
  g.pass = g.n_left >= min_seg && g.n_right >= min_seg && agrees &&
           std::abs(g.relative_change) >= options.min_relative_change && g.effect >= options.k_sigma &&
           g.p_value <= options.max_p_value;
  if (g.pass && p.wander > 0.0) {
    g.pass = wander_z(diff, sigma, p.wander, g.n_left, g.n_right) >= k_wander_z;
  }
  if (g.pass && options.lab_model) {
    // A ramp that fits the windows clearly better than a step is no change point, unless a jump at the change
    // still explains much on top of that ramp (a step beside or inside a ramp).
    // Over k_ramp_window points either side, not cut at the neighbouring change points: a staircase of
    // candidates on one ramp would cut it into pieces that each look like a step.
    const std::size_t a = pos >= k_ramp_window ? pos - k_ramp_window : 0, b = std::min(y.size(), pos + k_ramp_window);
    const RampTest ramp = ramp_test(y.subspan(a, b - a), pos - a, sigma, k_min_ramp);
    g.pass = ramp.advantage < k_ramp_advantage || ramp.jump_given_ramp >= k_jump_given_ramp;
  }
  // The abruptness gates judge the jump against the noise around it: where the noise level changes along the
  // series (a variance step), the series' sigma overstates it in the calm stretch.
  const double near_sigma = options.lab_model ? local_sigma(y.subspan(left_lo, right_hi - left_lo), sigma) : sigma;
  if (g.pass && options.lab_model) {
    double jump = 0;
    const double z = near_jump(y, lo, pos, hi, near_sigma, options, jump);
    g.pass = jump * diff > 0.0 && z >= options.abrupt_z && std::abs(jump) >= abrupt_share(options) * std::abs(diff);
  }
  if (g.pass && options.lab_model && lab_left.size() >= 4 && lab_right.size() >= 4) {
    double gap = 0;
    const double z = hinge_z(lab_left, lab_right, near_sigma, gap);
    g.pass = gap * diff > 0.0 && std::abs(z) >= (strict(options) ? k_strict_hinge_z : k_lenient_hinge_z);
  }
  if (g.pass && p.machines > 1) {
    g.pass = machines_agree(p, left_lo, pos, right_hi, diff, g.machines);
  }
  return g;
}

namespace {

// Standardised Pettitt statistic |U_t| / sd(U_t) for every split t in [from, to] of y[lo, hi).
std::vector<double> rank_split_scores(std::span<const double> y, std::size_t lo, std::size_t hi, std::size_t from,
                                      std::size_t to) {
  std::vector<double> out;
  if (from > to || lo >= hi) {
    return out;
  }
  // U_t = sum_{i < t <= j} sign(y_j - y_i), built incrementally as t advances.
  long u = 0;
  for (std::size_t i = lo; i < from; ++i) {
    for (std::size_t j = from; j < hi; ++j) {
      u += (y[j] > y[i]) - (y[j] < y[i]);
    }
  }
  // Standardised because raw Pettitt favours the middle of an asymmetric window.
  for (std::size_t t = from; t <= to && t < hi; ++t) {
    if (t > from) {
      // Moving k = t-1 from the right side to the left: U_t = U_{t-1} - sum_{i != k} sign(y_k - y_i).
      const std::size_t k = t - 1;
      for (std::size_t i = lo; i < hi; ++i) {
        u -= (y[k] > y[i]) - (y[k] < y[i]);
      }
    }
    const auto m = static_cast<double>(t - lo), n = static_cast<double>(hi - t);
    out.push_back(m * n > 0 ? std::abs(static_cast<double>(u)) / std::sqrt(m * n * (m + n + 1.0) / 3.0) : 0.0);
  }
  return out;
}

} // namespace

std::size_t best_rank_split(std::span<const double> y, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to,
                            std::size_t current) {
  const std::vector<double> scores = rank_split_scores(y, lo, hi, from, to);
  if (scores.empty()) {
    return current;
  }
  return from + static_cast<std::size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
}

std::pair<std::size_t, std::size_t> rank_split_range(std::span<const double> y, std::size_t lo, std::size_t hi,
                                                     std::size_t from, std::size_t to, double drop) {
  const std::vector<double> scores = rank_split_scores(y, lo, hi, from, to);
  if (scores.empty()) {
    return {from, from};
  }
  const double best = *std::max_element(scores.begin(), scores.end());
  std::size_t first = scores.size(), last = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] * scores[i] >= best * best - drop) {
      first = std::min(first, i);
      last = i;
    }
  }
  return {from + first, from + last};
}

} // namespace bisectd::bisect::detail

namespace bisectd::bisect {

namespace {

struct LkpSummary {
  double min = 0, median = 0, max = 0;
};

LkpSummary lkp_summary(const std::vector<double>& values) {
  std::vector<double> s(values);
  std::sort(s.begin(), s.end());
  const std::size_t margin = std::min<std::size_t>(s.size() >> 5, 3);
  const std::size_t first = margin, last = s.size() - 1 - margin;
  return LkpSummary{s[first], s[first + (last - first + 1) / 2], s[last]};
}

} // namespace

bool lkp_changed(const std::vector<double>& base, const std::vector<double>& head) {
  if (base.empty() || head.empty() || (base.size() < 3 && head.size() < 3)) {
    return false;
  }
  const LkpSummary b = lkp_summary(base);
  const LkpSummary h = lkp_summary(head);
  const bool separated = (b.min > h.median && b.median > h.max) || (h.min > b.median && h.median > b.max);
  if (!separated) {
    return false;
  }
  const double hi = std::max(b.median, h.median), lo = std::min(b.median, h.median);
  return lo > 0.0 && hi / lo > 1.01;
}

} // namespace bisectd::bisect
