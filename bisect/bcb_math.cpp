#include "bisect/bcb_math.hpp"

#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::bisect::math {

// One implementation of the normal functions lives in stats.cpp; these keep the engine's clamping.
double normal_cdf(double x) { return bisect::normal_cdf(x); }

double normal_quantile(double p) { return bisect::normal_quantile(std::clamp(p, 1e-300, 1.0 - 1e-16)); }

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
