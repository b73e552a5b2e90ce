#include "bisect/bcb_math.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace bisectd::bisect::math {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double normal_quantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1.0 - 1e-16);
  const double lo = 0.02425;
  if (p < lo || p > 1 - lo) {
    double q = std::sqrt(-2 * std::log(p < lo ? p : 1 - p));
    double x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    return p < lo ? x : -x;
  }
  double q = p - 0.5;
  double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

std::vector<double> normal_scores(const std::vector<double>& values) {
  std::size_t n = values.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && values[order[j + 1]] == values[order[i]]) {
      ++j;
    }
    double rank = (static_cast<double>(i + j) / 2.0) + 1.0;
    double score = normal_quantile((rank - 0.375) / (static_cast<double>(n) + 0.25));
    for (std::size_t k = i; k <= j; ++k) {
      out[order[k]] = score;
    }
    i = j + 1;
  }
  return out;
}

double biawgn_capacity(double d) {
  // I(X;Y) = h(Y) - h(noise), Y ~ 0.5 N(0,1) + 0.5 N(d,1); trapezoid rule on a wide grid.
  const double lim = 10.0;
  const int steps = 4000;
  double h = (2 * lim + d) / steps;
  double hy = 0;
  auto phi = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); };
  for (int k = 0; k <= steps; ++k) {
    double y = -lim + k * h;
    double p = 0.5 * phi(y) + 0.5 * phi(y - d);
    if (p > 0) {
      hy -= p * std::log2(p) * h * ((k == 0 || k == steps) ? 0.5 : 1.0);
    }
  }
  return std::max(1e-9, hy - 0.5 * std::log2(2 * M_PI * M_E));
}

double binary_entropy(double p) {
  if (p <= 0 || p >= 1) {
    return 0;
  }
  return -p * std::log2(p) - (1 - p) * std::log2(1 - p);
}

double runs_lower_bound(double n, double d, double delta) {
  double bits = std::log2(n) - binary_entropy(delta) - delta * std::log2(std::max(1.0, n - 1));
  return std::max(0.0, bits) / biawgn_capacity(d);
}

} // namespace bisectd::bisect::math
