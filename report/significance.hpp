#pragma once
// Which secondary metrics a comparison table shows and where: the significance rule (is a metric's change between
// two commits beyond its own run-to-run noise?) and LKP's grouping of rows. docs/report.md states the rule.

#include "report/report.hpp"

#include <cstddef>
#include <string_view>

namespace bisectd::report {

// The table's row groups, in the order LKP's reports list them: the benchmark's own metrics, then the monitors,
// perf-stat and perf-profile last (its call chains, then children, then self).
enum class RowGroup {
  benchmark,
  time,
  vmstat, // vmstat.* and mpstat.*: CPU time and system rates
  proc_vmstat,
  meminfo,
  interrupts,
  softirqs,
  other, // any other family (LKP monitors bisectd does not collect, a benchmark's second prefix), by family name
  perf_stat,
  perf_profile_calltrace,
  perf_profile_children,
  perf_profile_self,
  perf_profile_other,
};

// "proc-vmstat" of "proc-vmstat.pgfault": the text before the first '.', the whole name when there is none.
std::string_view metric_family(std::string_view metric);

// The group of `metric` in a table whose primary metric is `primary`: the benchmark's own metrics are those of the
// primary's family (and names without a family).
RowGroup row_group(std::string_view metric, std::string_view primary);

// The fewest runs on each side for a metric to be judged (LKP judges with 3 on one side; a variance needs 2).
inline constexpr std::size_t k_min_runs_each_side = 2;
// How many combined standard errors the means must be apart.
inline constexpr double k_standard_errors = 3.0;

// True when the change of `metric` from parent to culprit is beyond its own noise and large enough to matter:
//   - both sides have at least k_min_runs_each_side samples and one side at least 3 (a metric absent on a side
//     is never a row);
//   - LKP's separation: one side's samples lie clear of the other's (its min beyond their median and its median
//     beyond their max; two constant sides that differ are clear of each other, equal ones are not);
//   - the means differ by more than k_standard_errors combined standard errors (sqrt(s1²/n1 + s2²/n2)), so that a
//     separation that three runs give by chance does not make a row;
//   - the change is large enough (LKP's small-change filter and floors): at least 1% for the benchmark's own,
//     time.* and other metrics, 5% for the system monitors and perf-stat; absolute rows (names ending in '%',
//     vmstat.cpu.*) at least 1 percentage point; perf-profile rows at least 1% of samples on one side; counters
//     (proc-vmstat, interrupts, softirqs) at least 100 on one side.
// `primary` is the table's primary metric (its family is the benchmark's).
bool significant_change(const MetricComparison& metric, std::string_view primary);

} // namespace bisectd::report
