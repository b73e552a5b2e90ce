#pragma once
// The rows of an LKP comparison table between two commits, as the report mail and `bisectctl compare` show them:
// the samples of each metric gathered from the runs, the rows chosen and ordered, the cap, the monitors that gave
// nothing.

#include "report/report.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::report {

// The metrics of one run (one sample), by name.
using RunMetrics = std::map<std::string, double>;

// Every metric seen in any run of either side, by name, with its values on each side. A perf-profile.* metric
// missing from a run that has a profile (another perf-profile.* metric) counts as 0 there: the profiler saw no
// sample in that function. Any other metric missing from a run is missing, not 0.
std::vector<MetricComparison> compare_runs(const std::vector<RunMetrics>& parent,
                                           const std::vector<RunMetrics>& culprit);

struct TableRows {
  std::vector<MetricComparison> rows; // primary, then watched, then significant rows in LKP's order
  std::size_t hidden = 0;             // significant rows left out by the cap
};

// The primary metric (always, when it has samples), the `watch` metrics (whatever they did, when both sides have
// samples), then every other metric whose change is significant (significance.hpp), grouped as LKP's reports
// group them (RowGroup order; the `other` group by family name) and, within a group, by the size of the change
// shown (|%change|, or the absolute delta), largest first, then by name. At most `cap` significant rows (0: no
// cap), shared out between the groups in turns (each group's largest rows first, every group with rows gets some
// before any gets more); `hidden` counts the rest.
TableRows select_rows(const std::vector<MetricComparison>& metrics, std::string_view primary,
                      const std::vector<std::string>& watch, std::size_t cap);

// The monitors among `monitors` (a job's `monitors:` names, which are metric families) that gave no metric on any
// run of either side, in the given order.
std::vector<std::string> unavailable_monitors(const std::vector<std::string>& monitors,
                                              const std::vector<MetricComparison>& metrics);

// The lines after a table: "    ... 12 more rows: <more_command>" when rows were left out, and "unavailable
// monitors: interrupts, softirqs (no metric on any run)" when some gave nothing; each line ends with '\n'.
std::string table_notes(std::size_t hidden, std::string_view more_command, const std::vector<std::string>& unavailable);

// `bisectctl compare`'s text: the job and runs, the two commits as the report names them (`sha10 ("subject")`,
// `a` first: the base), the table of `table` (headed by both shas) and its notes. Lines end with '\n'.
std::string render_comparison(std::string_view job, const Commit& a, const Commit& b, const TableRows& table,
                              std::string_view more_command, const std::vector<std::string>& unavailable);

} // namespace bisectd::report
