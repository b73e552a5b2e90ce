#include "report/change_table.hpp"

#include "report/text.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::report {

namespace {

constexpr int k_abs_width = 10;
constexpr int k_err_width = 6;
constexpr int k_rel_width = 10;

// LKP's StatSummary: sorted samples, n>>5 trimmed from each end (at most 3), median as "mean".
struct Summary {
  double min = 0, median = 0, max = 0;
};

Summary summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  std::size_t margin = std::min<std::size_t>(samples.size() >> 5, 3);
  auto first = samples.begin() + static_cast<std::ptrdiff_t>(margin);
  auto last = samples.end() - static_cast<std::ptrdiff_t>(margin);
  std::vector<double> kept(first, last);
  return Summary{kept.front(), kept[kept.size() / 2], kept.back()};
}

// The two-sided 95% Student t quantile; from 11 degrees of freedom on an approximation within 0.03.
double t_quantile_975(double df) {
  static constexpr double k_table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228};
  if (df < 11) {
    return k_table[static_cast<std::size_t>(std::max(1.0, df)) - 1]; // rounding down is the wider interval
  }
  return 1.96 + 2.4 / df;
}

// The sum of squared deviations from the mean: the sample variance and LKP's stddev divide it.
double squared_deviations(const std::vector<double>& samples) {
  double average = mean(samples);
  double sum = 0;
  for (double value : samples) {
    sum += (value - average) * (value - average);
  }
  return sum;
}

double sample_variance(const std::vector<double>& samples) {
  return samples.size() < 2 ? 0 : squared_deviations(samples) / static_cast<double>(samples.size() - 1);
}

std::string format_average(double average) {
  double magnitude = std::fabs(average);
  if (magnitude < 1000) {
    return strprintf("%*.2f", k_abs_width, average);
  }
  if (magnitude > 100'000'000) {
    return strprintf("%*.4g", k_abs_width, average);
  }
  return strprintf("%*lld", k_abs_width, static_cast<long long>(average)); // Ruby's %d truncates
}

std::string format_stddev(double average, double stddev) {
  double percent = average != 0 ? 100 * stddev / average : stddev;
  // Samples near 1e300 average to infinity: no percentage is shown rather than casting it to an integer.
  if (std::isfinite(percent) && percent > 2) {
    return strprintf(" \u00b1%*lld%%", k_err_width - 3,
                     static_cast<long long>(std::min(percent, 1e15))); // still fits the column's integer
  }
  return std::string(k_err_width, ' ');
}

std::string format_change(double change, bool absolute) {
  const char* format =
    std::fabs(change) < 100'000 ? (absolute ? "%+*.1f  " : "%+*.1f%% ") : (absolute ? "%+*.2g  " : "%+*.2g%% ");
  return strprintf(format, k_rel_width, change);
}

} // namespace

double mean(const std::vector<double>& samples) {
  if (samples.empty()) {
    return 0;
  }
  double sum = 0;
  for (double value : samples) {
    sum += value;
  }
  return sum / static_cast<double>(samples.size());
}

double population_stddev(const std::vector<double>& samples) {
  return samples.size() < 2 ? 0 : std::sqrt(squared_deviations(samples) / static_cast<double>(samples.size()));
}

bool uses_absolute_change(std::string_view metric) {
  return metric.ends_with('%') || metric.starts_with("perf-profile") || metric.starts_with("vmstat.cpu.");
}

double relative_change_percent(const MetricComparison& metric) {
  double base = mean(metric.parent_samples);
  if (base == 0) {
    base = 1e-100;
  }
  return 100.0 * (mean(metric.culprit_samples) - base) / base;
}

ShiftEstimate estimate_shift(const MetricComparison& metric) {
  const auto& parent = metric.parent_samples;
  const auto& culprit = metric.culprit_samples;
  ShiftEstimate shift;
  shift.parent_runs = parent.size();
  shift.culprit_runs = culprit.size();
  if (parent.empty() || culprit.empty()) {
    return shift;
  }
  shift.known = true;
  shift.estimate = relative_change_percent(metric) / 100;
  double base = mean(parent) == 0 ? 1e-100 : mean(parent);
  double np = static_cast<double>(parent.size()), nc = static_cast<double>(culprit.size());
  double vp = parent.size() > 1 ? sample_variance(parent) : sample_variance(culprit);
  double vc = culprit.size() > 1 ? sample_variance(culprit) : sample_variance(parent);
  double ratio = mean(culprit) / base;
  double se = std::sqrt(vc / nc + ratio * ratio * vp / np) / std::fabs(base);
  double half = t_quantile_975(np + nc - 2) * se;
  shift.low = shift.estimate - half;
  shift.high = shift.estimate + half;
  return shift;
}

double table_change(const MetricComparison& metric) {
  if (uses_absolute_change(metric.name)) {
    return mean(metric.culprit_samples) - mean(metric.parent_samples);
  }
  return relative_change_percent(metric);
}

bool changed_beyond_noise(const MetricComparison& metric) {
  const auto& a = metric.culprit_samples;
  const auto& b = metric.parent_samples;
  if (a.empty() || b.empty() || (a.size() < 3 && b.size() < 3)) {
    return false;
  }
  Summary sa = summarize(a);
  Summary sb = summarize(b);
  bool separated = (sb.min > sa.median && sb.median > sa.max) || (sa.min > sb.median && sa.median > sb.max);
  if (!separated) {
    return false;
  }
  double low = std::min(sa.median, sb.median);
  double high = std::max(sa.median, sb.median);
  return low <= 0 || high / low > 1.01;
}

std::string format_change_row(const MetricComparison& metric) {
  double parent_average = mean(metric.parent_samples);
  double culprit_average = mean(metric.culprit_samples);
  std::string row = format_average(parent_average);
  row += format_stddev(parent_average, population_stddev(metric.parent_samples));
  row += format_change(table_change(metric), uses_absolute_change(metric.name));
  row += format_average(culprit_average);
  row += format_stddev(culprit_average, population_stddev(metric.culprit_samples));
  row += "  " + metric_label(metric.name);
  return row;
}

std::string format_change_table(std::string_view parent_sha, std::string_view culprit_sha,
                                const std::vector<MetricComparison>& metrics) {
  constexpr int k_first = k_abs_width + k_err_width;
  constexpr int k_next = k_first + k_rel_width + 1;
  std::string parent(single_line(parent_sha).substr(0, k_first));
  std::string culprit(single_line(culprit_sha).substr(0, k_next));
  std::string out = strprintf("%*s %*s\n", k_first, parent.c_str(), k_next, culprit.c_str());
  out += std::string(k_first, '-') + " " + std::string(k_next, '-') + "\n";
  out += "         %stddev     %change         %stddev\n";
  out += "             \\          |                \\\n";
  for (const auto& metric : metrics) {
    out += format_change_row(metric) + "\n";
  }
  return strip_trailing_space(out);
}

} // namespace bisectd::report
