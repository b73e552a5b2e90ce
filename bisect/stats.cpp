#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace bisectd::bisect {

namespace {


std::vector<double> sorted_copy(std::span<const double> values) {
  std::vector<double> out(values.begin(), values.end());
  std::sort(out.begin(), out.end());
  return out;
}

// Continued fraction for the incomplete beta function (modified Lentz), valid for x < (a+1)/(a+b+2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double k_tiny = 1e-300;
  constexpr double k_eps = 1e-15;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::abs(d) < k_tiny ? k_tiny : d);
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    for (int step = 0; step < 2; ++step) {
      d = 1.0 + num * d;
      d = 1.0 / (std::abs(d) < k_tiny ? k_tiny : d);
      c = 1.0 + num / c;
      c = std::abs(c) < k_tiny ? k_tiny : c;
      const double delta = c * d;
      h *= delta;
      if (step == 1 && std::abs(delta - 1.0) < k_eps) {
        return h;
      }
      num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    }
  }
  return h;
}

} // namespace

double mean(std::span<const double> values) {
  if (values.empty()) {
    return k_nan;
  }
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double variance(std::span<const double> values) {
  if (values.size() < 2) {
    return 0.0;
  }
  const double m = mean(values);
  double sum = 0.0;
  for (double v : values) {
    sum += (v - m) * (v - m);
  }
  return sum / static_cast<double>(values.size() - 1);
}

double stddev(std::span<const double> values) { return std::sqrt(variance(values)); }

double median(std::span<const double> values) { return quantile(values, 0.5); }

std::vector<double> clip_to_running_median(std::span<const double> y, double sigma) {
  constexpr double clip = 3.5;
  constexpr std::size_t half_window = 3;
  std::vector<double> z(y.size());
  for (std::size_t t = 0; t < y.size(); ++t) {
    const std::size_t a = t >= half_window ? t - half_window : 0, b = std::min(y.size(), t + half_window + 1);
    const double fit = median(y.subspan(a, b - a));
    z[t] = fit + std::clamp(y[t] - fit, -clip * sigma, clip * sigma);
  }
  return z;
}

double quantile(std::span<const double> values, double q) {
  if (values.empty()) {
    return k_nan;
  }
  const std::vector<double> s = sorted_copy(values);
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return s[lo] + frac * (s[hi] - s[lo]);
}

double mad(std::span<const double> values) {
  if (values.empty()) {
    return 0.0;
  }
  const double m = median(values);
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) {
    dev.push_back(std::abs(v - m));
  }
  return median(dev);
}

std::vector<double> log_values(std::span<const double> values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) {
    out.push_back(std::log(v));
  }
  return out;
}

double robust_sigma(std::span<const double> values) { return k_mad_to_sigma * mad(values); }

double diff_sigma(std::span<const double> values) {
  if (values.size() < 2) {
    return 0.0;
  }
  std::vector<double> diffs;
  diffs.reserve(values.size() - 1);
  for (std::size_t i = 1; i < values.size(); ++i) {
    diffs.push_back(values[i] - values[i - 1]);
  }
  // The MAD is taken around 0, not the median difference: a trend-free series has zero-mean differences.
  for (double& d : diffs) {
    d = std::abs(d);
  }
  return k_mad_to_sigma * median(diffs) / std::sqrt(2.0);
}

double hodges_lehmann_shift(std::span<const double> a, std::span<const double> b) {
  std::vector<double> diffs;
  diffs.reserve(a.size() * b.size());
  for (double x : a) {
    for (double y : b) {
      diffs.push_back(y - x);
    }
  }
  return diffs.empty() ? k_nan : median(diffs);
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double normal_quantile(double p) {
  if (p <= 0.0) {
    return -std::numeric_limits<double>::infinity();
  }
  if (p >= 1.0) {
    return std::numeric_limits<double>::infinity();
  }
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double p_low = 0.02425;
  if (p < p_low || p > 1.0 - p_low) {
    const double q = std::sqrt(-2.0 * std::log(p < p_low ? p : 1.0 - p));
    const double x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
                     ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    return p < p_low ? x : -x;
  }
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

double regularized_beta(double a, double b, double x) {
  if (x <= 0.0) {
    return 0.0;
  }
  if (x >= 1.0) {
    return 1.0;
  }
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  // Use the continued fraction where it converges fast, and the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) elsewhere.
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  }
  return 1.0 - std::exp(log_front) * beta_continued_fraction(b, a, 1.0 - x) / b;
}

double student_t_cdf(double t, double df) {
  if (std::isinf(t)) {
    return t > 0 ? 1.0 : 0.0;
  }
  const double x = df / (df + t * t);
  const double tail = 0.5 * regularized_beta(df / 2.0, 0.5, x);
  return t > 0 ? 1.0 - tail : tail;
}

} // namespace bisectd::bisect
