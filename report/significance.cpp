#include "report/significance.hpp"

#include "report/change_table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace bisectd::report {

namespace {

constexpr std::array<std::pair<std::string_view, RowGroup>, 8> k_families = {{
  {"time", RowGroup::time},
  {"vmstat", RowGroup::vmstat},
  {"mpstat", RowGroup::vmstat},
  {"proc-vmstat", RowGroup::proc_vmstat},
  {"meminfo", RowGroup::meminfo},
  {"interrupts", RowGroup::interrupts},
  {"softirqs", RowGroup::softirqs},
  {"perf-stat", RowGroup::perf_stat},
}};

constexpr double k_benchmark_min_change = 0.01; // LKP: a KPI or time.* stat moves by more than 1%
constexpr double k_monitor_min_change = 0.05;   // LKP: any other monitor by more than 5%
constexpr double k_min_points = 1.0;            // absolute rows: one percentage point
constexpr double k_min_profile_share = 1.0;     // perf-profile: LKP's floor, 1% of samples on one side
constexpr double k_min_counter = 100;           // counters: fewer events than this per run tell nothing

double sample_variance(const std::vector<double>& samples) {
  double average = mean(samples);
  double sum = 0;
  for (double value : samples) {
    sum += (value - average) * (value - average);
  }
  return sum / static_cast<double>(samples.size() - 1);
}

bool beyond_standard_errors(const MetricComparison& metric) {
  const auto& p = metric.parent_samples;
  const auto& c = metric.culprit_samples;
  double se = std::sqrt(sample_variance(p) / static_cast<double>(p.size()) +
                        sample_variance(c) / static_cast<double>(c.size()));
  return std::fabs(mean(c) - mean(p)) > k_standard_errors * se;
}

bool large_enough(const MetricComparison& metric, RowGroup group) {
  double parent = mean(metric.parent_samples);
  double culprit = mean(metric.culprit_samples);
  double larger = std::max(std::fabs(parent), std::fabs(culprit));
  switch (group) {
  case RowGroup::perf_profile_calltrace:
  case RowGroup::perf_profile_children:
  case RowGroup::perf_profile_self:
  case RowGroup::perf_profile_other:
    return larger >= k_min_profile_share;
  case RowGroup::proc_vmstat:
  case RowGroup::interrupts:
  case RowGroup::softirqs:
    if (larger < k_min_counter) {
      return false;
    }
    break;
  default:
    break;
  }
  if (uses_absolute_change(metric.name)) {
    return std::fabs(culprit - parent) >= k_min_points;
  }
  bool monitor = group != RowGroup::benchmark && group != RowGroup::time && group != RowGroup::other;
  double threshold = monitor ? k_monitor_min_change : k_benchmark_min_change;
  double smaller = std::min(std::fabs(parent), std::fabs(culprit));
  // Ratio of the means, so that a change from zero (a counter that appears) is always large.
  return smaller == 0 ? larger > 0 : larger / smaller > 1 + threshold;
}

} // namespace

std::string_view metric_family(std::string_view metric) { return metric.substr(0, metric.find('.')); }

RowGroup row_group(std::string_view metric, std::string_view primary) {
  if (metric.starts_with("perf-profile.")) {
    if (metric.starts_with("perf-profile.calltrace.")) {
      return RowGroup::perf_profile_calltrace;
    }
    if (metric.starts_with("perf-profile.children.")) {
      return RowGroup::perf_profile_children;
    }
    return metric.starts_with("perf-profile.self.") ? RowGroup::perf_profile_self : RowGroup::perf_profile_other;
  }
  std::string_view family = metric_family(metric);
  if (family == metric || family == metric_family(primary)) {
    return RowGroup::benchmark;
  }
  for (const auto& [name, group] : k_families) {
    if (family == name) {
      return group;
    }
  }
  return RowGroup::other;
}

bool significant_change(const MetricComparison& metric, std::string_view primary) {
  if (metric.parent_samples.size() < k_min_runs_each_side || metric.culprit_samples.size() < k_min_runs_each_side) {
    return false;
  }
  return changed_beyond_noise(metric) && beyond_standard_errors(metric) &&
         large_enough(metric, row_group(metric.name, primary));
}

} // namespace bisectd::report
