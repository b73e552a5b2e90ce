#pragma once
// Parsing benchmark output into metrics: LKP `key: value` lines or one JSON object.

#include "base/error.hpp"
#include "lab/machine.hpp"

#include <map>
#include <string>
#include <string_view>

namespace bisectd::lab {

// LKP: every line `name: number` (name without spaces) becomes a metric; other lines are ignored.
// JSON: the last top-level JSON object in the output; its numeric members (nested objects flattened
// with '.') become metrics. Non-numeric values are ignored.
std::map<std::string, double> parse_metrics(std::string_view output, MetricFormat format);

} // namespace bisectd::lab
