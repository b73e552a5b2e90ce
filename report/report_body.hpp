#pragma once
// Internal: the sections of the report body (report.cpp assembles them).

#include "report/report.hpp"

#include <string>

namespace bisectd::report::detail {

// The primary comparison: the metric named `input.metric`, else the first one; nullptr when there is none.
const MetricComparison* primary_metric(const ReportInput& input);

// "-6.5%" style change of the primary metric, or "" when unknown.
std::string primary_change_text(const ReportInput& input);

// "regression" or "improvement" from the sign of the change times the direction ("change" when unknown).
std::string change_kind(const ReportInput& input);

// The mail body; `message_id` feeds the Closes: tag.
std::string report_body(const ReportInput& input, const std::string& message_id);

} // namespace bisectd::report::detail
