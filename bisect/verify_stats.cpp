#include "bisect/verify_stats.hpp"

#include "bisect/stats.hpp"

#include <cmath>
#include <limits>

namespace bisectd::bisect {

namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

} // namespace

MeanChange mean_change(const std::vector<double>& before, const std::vector<double>& after) {
  MeanChange c{k_nan, k_nan, before.size(), after.size()};
  if (before.size() < 2 || after.size() < 2) {
    return c;
  }
  auto stats = [](const std::vector<double>& v) { return std::pair{mean(v), variance(v)}; };
  auto [m0, v0] = stats(before);
  auto [m1, v1] = stats(after);
  if (m0 == 0) {
    return c;
  }
  c.change = (m1 - m0) / std::abs(m0);
  c.half_width =
    1.96 * std::sqrt(v0 / static_cast<double>(before.size()) + v1 / static_cast<double>(after.size())) / std::abs(m0);
  return c;
}

bool shift_vanished(const ShiftTest& normal, const ShiftTest& variant) {
  if (variant.confirmed && (variant.relative_change > 0) == (normal.relative_change > 0)) {
    return false;
  }
  bool opposite = variant.relative_change * normal.relative_change < 0;
  return opposite || std::abs(variant.relative_change) < 0.5 * std::abs(normal.relative_change);
}

double recovered_fraction(const std::vector<double>& bad, const std::vector<double>& revert, double shift) {
  double b = median(bad), r = median(revert);
  if (std::isnan(b) || std::isnan(r) || b <= 0 || r <= 0 || !(shift > -1) || std::abs(shift) < 1e-6) {
    return k_nan;
  }
  return std::log(r / b) / -std::log1p(shift);
}

} // namespace bisectd::bisect
