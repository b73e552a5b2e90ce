#pragma once
// The LKP comparison block "%stddev %change %stddev" (lkp-tests lib/compare.rb show_perf_change formats):
// average %.2f below 1000, %.4g above 1e8, else an integer; ±N% only when the relative stddev is above 2%;
// change %+.1f%% (%.2g from 1e5 on), an absolute change for metrics ending in '%' or starting with perf-profile.

#include "report/report.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace bisectd::report {

double mean(const std::vector<double>& samples);              // 0 when empty
double population_stddev(const std::vector<double>& samples); // divides by n (as LKP); 0 when < 2 samples

// True when the table shows an absolute delta instead of a percentage: percentages (a name ending in '%',
// vmstat.cpu.*) and perf-profile.* shares.
bool uses_absolute_change(std::string_view metric);

// 100 * (culprit mean - parent mean) / parent mean (a zero parent mean counts as 1e-100, as LKP does).
double relative_change_percent(const MetricComparison& metric);

// The primary metric's shift, culprit vs parent: the table's relative change of the means (a fraction) with a
// 95% interval (delta method on the ratio of the means, Student t with n1 + n2 - 2 degrees of freedom; a side
// with one sample borrows the other side's variance). Unknown when a side has no sample.
ShiftEstimate estimate_shift(const MetricComparison& metric);

// The change shown in the table: relative percent, or the absolute delta for uses_absolute_change metrics.
double table_change(const MetricComparison& metric);

// LKP's "changed" rule (lib/stats.rb): the culprit's samples lie clear of the parent's (min beyond the other
// median and median beyond the other max), at least 3 samples on one side, and the medians differ by > 1%.
bool changed_beyond_noise(const MetricComparison& metric);

// One table row: "    616938            -3.7%     593885        aim7.jobs-per-min" (no line break); the name as
// metric_label makes it safe.
std::string format_change_row(const MetricComparison& metric);

// The whole block: sha header (16 and 27 characters), dashes, "%stddev %change %stddev" header, one row per
// metric in the given order. Lines end with '\n'; trailing spaces are kept out.
std::string format_change_table(std::string_view parent_sha, std::string_view culprit_sha,
                                const std::vector<MetricComparison>& metrics);

} // namespace bisectd::report
