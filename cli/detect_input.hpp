#pragma once
// Input files of `bisectctl detect`: a benchmark series as JSON or CSV.
//
// JSON: {"values": [v, ...]} (one sample per point, no ids) or
//       {"commits": [{"id": "abc", "samples": [v, ...]}, ...]}.
// CSV:  one value per line, or `commit,value` lines (a repeated commit id adds a sample to that commit,
//       which keeps the position of its first line). An optional header line, blank lines and `#` comments
//       are allowed. The format is chosen by content: JSON when the first non-blank character is `{`.

#include "base/error.hpp"
#include "bisect/detect.hpp"

#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace bisectd::cli {

struct DetectInput {
  std::vector<bisect::SeriesPoint> points; // in input order; `id` empty when the input has no ids
  bool has_ids = false;
};

// Parses `text` (the content of the file called `name`, used in errors). Errors are one line naming
// `name:LINE` (CSV) or `name: <json path>` (JSON) and what is wrong.
Result<DetectInput> parse_detect_input(std::string_view text, const std::string& name);

Result<DetectInput> parse_detect_json(std::string_view text, const std::string& name);
Result<DetectInput> parse_detect_csv(std::string_view text, const std::string& name);

// A finite decimal number, the whole of `text` (leading '+' allowed); nullopt otherwise.
std::optional<double> parse_number(std::string_view text);

} // namespace bisectd::cli
