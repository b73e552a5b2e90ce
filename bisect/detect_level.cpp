// The lab level between change points: a periodic load component (the strongest sinusoid of the residuals,
// removed when it explains far more than noise would) and the wander of a local level (random-walk variance
// per point, from the robust variogram of the residuals), which the window gate adds to its noise.

#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

namespace bisectd::bisect::detail {

namespace {

constexpr double k_winsor = 4.0;       // residuals clipped at 4 sigma: outliers and outages do not fit sines
constexpr double k_min_cycles = 3.0;   // a period is seen at least 3 times: fewer look like drift or a step
constexpr double k_oversample = 4.0;   // trial frequencies per Fourier frequency
constexpr double k_periodic_fa = 1e-3; // chance that noise alone passes the periodic test, per series
constexpr std::size_t k_wander_lag = 64;
constexpr double k_half_chi2 = 9.2;      // chi2(2) above 9.2: 1 % for noise, in each half
constexpr double k_half_phase_cos = 0.7; // halves' phases within ~45 degrees
constexpr double k_half_level_lr = 2.0;  // local-level likelihood ratio in each half of the series

// Explained sum of squares of the least-squares fit r ~ a sin(wt) + b cos(wt) (r centred), and a, b.
double sine_fit(std::span<const double> r, double w, double& a, double& b) {
  double ss = 0, cc = 0, sc = 0, rs = 0, rc = 0;
  for (std::size_t t = 0; t < r.size(); ++t) {
    const double s = std::sin(w * static_cast<double>(t)), c = std::cos(w * static_cast<double>(t));
    ss += s * s;
    cc += c * c;
    sc += s * c;
    rs += r[t] * s;
    rc += r[t] * c;
  }
  const double det = ss * cc - sc * sc;
  if (det <= 0.0) {
    a = b = 0;
    return 0.0;
  }
  a = (rs * cc - rc * sc) / det;
  b = (rc * ss - rs * sc) / det;
  return a * rs + b * rc;
}

// Whether the sinusoid of frequency w (global phase) is seen in both halves of r, with a similar phase: a
// missed step or a burst explains power at some frequency in one half, a load cycle does so in both.
bool seen_in_both_halves(std::span<const double> r, double w, double sigma) {
  const std::size_t half = r.size() / 2;
  double a1 = 0, b1 = 0, a2 = 0, b2 = 0;
  const double e1 = sine_fit(r.subspan(0, half), w, a1, b1);
  // The second half's time starts at `half`: rotate its (a, b) back to the global phase.
  const double e2 = sine_fit(r.subspan(half), w, a2, b2);
  const double shift = w * static_cast<double>(half);
  const double ga2 = a2 * std::cos(shift) + b2 * std::sin(shift), gb2 = b2 * std::cos(shift) - a2 * std::sin(shift);
  const double threshold = k_half_chi2 * sigma * sigma;
  const double dot = a1 * ga2 + b1 * gb2, norms = std::hypot(a1, b1) * std::hypot(ga2, gb2);
  return e1 >= threshold && e2 >= threshold && norms > 0.0 && dot / norms >= k_half_phase_cos;
}

} // namespace

std::vector<double> residuals(std::span<const double> y, const std::vector<std::size_t>& cps) {
  std::vector<double> r(y.begin(), y.end());
  for (std::size_t j = 0; j <= cps.size(); ++j) {
    const std::size_t lo = j == 0 ? 0 : cps[j - 1], hi = j == cps.size() ? y.size() : cps[j];
    if (hi <= lo) {
      continue;
    }
    const double level = median(y.subspan(lo, hi - lo));
    for (std::size_t i = lo; i < hi; ++i) {
      r[i] -= level;
    }
  }
  return r;
}

std::vector<double> periodic_component(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma,
                                       std::size_t min_period) {
  const std::size_t n = y.size();
  std::vector<double> r = residuals(y, cps);
  if (sigma <= 0.0 || n < 3 * min_period) {
    return {};
  }
  // Noise of the noisier half: a variance step must not pass for a cycle.
  const std::size_t half = n / 2;
  sigma = std::max({sigma, diff_sigma(std::span<const double>(r).subspan(0, half)),
                    diff_sigma(std::span<const double>(r).subspan(half))});
  double mean = 0;
  for (double& v : r) {
    v = std::clamp(v, -k_winsor * sigma, k_winsor * sigma);
    mean += v;
  }
  mean /= static_cast<double>(n);
  for (double& v : r) {
    v -= mean;
  }
  // Frequencies from k_min_cycles cycles over the series to one cycle per min_period points.
  const double k_lo = k_min_cycles, k_hi = static_cast<double>(n) / static_cast<double>(min_period);
  double best = 0, best_w = 0, best_a = 0, best_b = 0;
  for (double k = k_lo; k <= k_hi; k += 1.0 / k_oversample) {
    const double w = 2.0 * std::numbers::pi * k / static_cast<double>(n);
    double a = 0, b = 0;
    const double explained = sine_fit(r, w, a, b);
    if (explained > best) {
      best = explained, best_w = w, best_a = a, best_b = b;
    }
  }
  // Noise alone: explained / sigma^2 ~ chi2(2) per independent frequency, P(> x) = exp(-x / 2).
  const double independent = std::max(1.0, k_hi - k_lo + 1.0);
  const double threshold = 2.0 * std::log(independent / k_periodic_fa);
  if (best / (sigma * sigma) < threshold || !seen_in_both_halves(r, best_w, sigma)) {
    return {};
  }
  std::vector<double> out(n);
  for (std::size_t t = 0; t < n; ++t) {
    out[t] = best_a * std::sin(best_w * static_cast<double>(t)) + best_b * std::cos(best_w * static_cast<double>(t));
  }
  return out;
}

double robust_variogram(const std::vector<double>& r, std::size_t h) {
  std::vector<double> d;
  for (std::size_t t = 0; t + h < r.size(); ++t) {
    d.push_back(r[t + h] - r[t]);
  }
  const double s = robust_sigma(d);
  return s * s / 2.0;
}

double wander_variance(std::span<const double> y, const std::vector<std::size_t>& cps, double min_ratio) {
  const std::size_t lag = std::min<std::size_t>(k_wander_lag, y.size() / 6);
  if (lag < 4) {
    return 0.0;
  }
  const std::vector<double> r = residuals(y, cps);
  const double short_lag = robust_variogram(r, 1), long_lag = robust_variogram(r, lag);
  if (short_lag <= 0.0 || long_lag <= min_ratio * short_lag) {
    return 0.0;
  }
  // Local level: variogram(h) = noise + h * wander / 2.
  return 2.0 * (long_lag - short_lag) / static_cast<double>(lag - 1);
}

namespace {

constexpr double k_clip_innovation = 4.0; // innovations beyond 4 standard errors are clipped: outliers, outages

// Concentrated Gaussian log-likelihood of the local-level model y_t = level_t + noise, level_t = level_{t-1} +
// walk, with q = var(walk) / var(noise); the level restarts (diffuse) at each change point. `s2` receives the
// noise variance that maximises it.
double local_level_loglik(std::span<const double> y, const std::vector<std::size_t>& cps, double q, double sigma,
                          double& s2) {
  double level = 0, p = 0, sum_log_f = 0, sum_v2 = 0;
  std::size_t m = 0, next_cp = 0;
  for (std::size_t t = 0; t < y.size(); ++t) {
    const bool at_cp = next_cp < cps.size() && cps[next_cp] == t;
    next_cp += at_cp ? 1 : 0;
    if (t == 0 || at_cp) {
      level = y[t];
      p = 1.0;
      continue;
    }
    p += q;
    const double f = p + 1.0;
    const double limit = k_clip_innovation * sigma * std::sqrt(f);
    const double v = std::clamp(y[t] - level, -limit, limit);
    const double gain = p / f;
    level += gain * v;
    p *= 1.0 - gain;
    sum_log_f += std::log(f);
    sum_v2 += v * v / f;
    ++m;
  }
  if (m == 0 || sum_v2 <= 0.0) {
    s2 = 0;
    return 0.0;
  }
  s2 = sum_v2 / static_cast<double>(m);
  return -0.5 * sum_log_f - 0.5 * static_cast<double>(m) * std::log(s2);
}

// Maximum-likelihood q of the local-level model on y (level restarting at cps), its likelihood ratio against a
// constant level in `lr`, the noise variance in `s2`.
double local_level_fit(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma, double& lr,
                       double& s2) {
  double base_s2 = 0, trial_s2 = 0;
  const double base = local_level_loglik(y, cps, 0.0, sigma, base_s2);
  double best = base, best_q = 0;
  s2 = base_s2;
  for (double q = 1e-5; q < 1.0; q *= 1.25) {
    const double l = local_level_loglik(y, cps, q, sigma, trial_s2);
    if (l > best) {
      best = l, best_q = q, s2 = trial_s2;
    }
  }
  lr = 2.0 * (best - base);
  return best_q;
}

// Change points of y[from, to) relative to `from`.
std::vector<std::size_t> cps_within(const std::vector<std::size_t>& cps, std::size_t from, std::size_t to) {
  std::vector<std::size_t> out;
  for (std::size_t c : cps) {
    if (c > from && c < to) {
      out.push_back(c - from);
    }
  }
  return out;
}

} // namespace

double constant_level_2ll(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma) {
  double s2 = 0;
  return 2.0 * local_level_loglik(y, cps, 0.0, sigma, s2);
}

double local_level_lr(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma) {
  if (sigma <= 0.0 || y.size() < 4) {
    return 0.0;
  }
  double lr = 0, s2 = 0;
  (void)local_level_fit(y, cps, sigma, lr, s2);
  return lr;
}

double local_level_wander(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma,
                          double min_lr) {
  if (sigma <= 0.0 || y.size() < 32) {
    return 0.0;
  }
  double lr = 0, s2 = 0;
  const double q = local_level_fit(y, cps, sigma, lr, s2);
  if (lr < min_lr) {
    return 0.0;
  }
  // A random walk wanders in both halves of the series; a step the change points missed, in one.
  const std::size_t half = y.size() / 2;
  for (const auto& [from, to] : {std::pair<std::size_t, std::size_t>{0, half}, {half, y.size()}}) {
    double part_lr = 0, part_s2 = 0;
    (void)local_level_fit(y.subspan(from, to - from), cps_within(cps, from, to), sigma, part_lr, part_s2);
    if (part_lr < k_half_level_lr) {
      return 0.0;
    }
  }
  return q * s2;
}

} // namespace bisectd::bisect::detail
