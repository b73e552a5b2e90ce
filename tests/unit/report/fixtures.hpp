#pragma once
// Fixed report inputs shared by the golden and unit tests of report/.

#include "report/report.hpp"

namespace bisectd::report::testing {

// A -6.5% style regression of vm-scalability.throughput, single culprit, everything filled in.
ReportInput regression_input();

// The same tree, an improvement of a lower-is-better metric.
ReportInput improvement_input();

// A confident answer that is a set of three commits (two of them do not build).
ReportInput set_input();

// The regression whose shift vanished with forced alignment.
ReportInput layout_input();

// No culprit with high confidence: a credible set of four commits.
ReportInput not_confident_input();

// A local-backend bisection whose parent ("docs: note 6") shares the binary of an earlier commit ("initial
// benchmark"), with watch: metrics and no Reported-by/Closes configured.
ReportInput shared_binary_input();

// A kernel regression whose table carries monitor and perf rows (LKP's names) gathered from six runs a side by
// compare_runs: rows beyond their noise in every group, rows within noise or too small, a metric of one side
// only, a monitor that gave nothing (softirqs), hostile names (CR/LF, 300 characters, invalid UTF-8), and more
// significant rows than the table's cap.
ReportInput monitors_input();

} // namespace bisectd::report::testing
