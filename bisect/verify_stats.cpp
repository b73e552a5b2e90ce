#include "bisect/verify_stats.hpp"

#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bisectd::bisect {

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

namespace {

// The standard error of a median of log values, from their MAD (1.2533 = sqrt(pi / 2): a median's standard
// error over a mean's for normal data).
double log_median_se(const std::vector<double>& values) {
  return 1.2533 * robust_sigma(log_values(values)) / std::sqrt(static_cast<double>(values.size()));
}

bool all_positive(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return v > 0; });
}

} // namespace

Recovery revert_recovery(const std::vector<double>& bad, const std::vector<double>& revert, double shift) {
  Recovery r{recovered_fraction(bad, revert, shift), k_nan};
  if (std::isnan(r.fraction) || bad.size() < 2 || revert.size() < 2 || !all_positive(bad) || !all_positive(revert)) {
    return r;
  }
  double se = std::hypot(log_median_se(bad), log_median_se(revert));
  r.half_width = 1.96 * se / std::abs(std::log1p(shift));
  return r;
}

RevertVerdict revert_verdict(const Recovery& r) {
  constexpr double k_back = 0.7, k_partly = 0.3;
  if (std::isnan(r.fraction)) {
    return RevertVerdict::unknown;
  }
  if (!std::isnan(r.half_width) && r.fraction - r.half_width < k_partly && r.fraction + r.half_width >= k_back) {
    return RevertVerdict::too_noisy;
  }
  return r.fraction >= k_back     ? RevertVerdict::comes_back
         : r.fraction >= k_partly ? RevertVerdict::partly
                                  : RevertVerdict::does_not_come_back;
}

} // namespace bisectd::bisect
