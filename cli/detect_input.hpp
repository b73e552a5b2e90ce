#pragma once
// Input files of `bisectctl detect`: a benchmark series as JSON or CSV.
//
// JSON: {"values": [v, ...]} (one sample per point, no ids) or
//       {"commits": [{"id": "abc", "samples": [v, ...]}, ...]}; each commit may also say where its samples
//       were measured: "machine": "box1" and "boot": "b7" (every sample), or "machines": [...] and
//       "boots": [...] (one string per sample). Without them the lab is unknown (as before).
// CSV:  one value per line, or `commit,value` lines (a repeated commit id adds a sample to that commit,
//       which keeps the position of its first line), optionally with `,machine` or `,machine,boot` after the
//       value (empty = unknown). An optional header line, blank lines and `#` comments are allowed. The
//       format is chosen by content: JSON when the first non-blank character is `{`.

#include "base/error.hpp"
#include "bisect/detect.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::cli {

struct DetectInput {
  std::vector<bisect::SeriesPoint> points; // in input order; `id` empty when the input has no ids
  bool has_ids = false;
  bool has_lab = false; // some sample names its machine or boot
};

// Parses `text` (the content of the file called `name`, used in errors). Errors are one line naming
// `name:LINE` (CSV) or `name: <json path>` (JSON) and what is wrong.
Result<DetectInput> parse_detect_input(std::string_view text, const std::string& name);

Result<DetectInput> parse_detect_json(std::string_view text, const std::string& name);
Result<DetectInput> parse_detect_csv(std::string_view text, const std::string& name);

// A finite decimal number, the whole of `text` (leading '+' allowed); nullopt otherwise.
std::optional<double> parse_number(std::string_view text);

} // namespace bisectd::cli
