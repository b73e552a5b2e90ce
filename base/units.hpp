#pragma once
// Parsing of the human units used in config and job files: durations and percentages.

#include "base/error.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace bisectd::base {

// "300s", "5m", "1h", "250ms", or a bare number of seconds ("90").
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// "2%" -> 0.02, "0.02" -> 0.02 (a bare number is a fraction).
Result<double> parse_percent(std::string_view text);

// The one duration formatter (mail, CLI, pages, errors): 1500 ms -> "1.5s", 90 s -> "1m30s", 600 s -> "10m",
// 3660 s -> "1h01m", 3600 s -> "1h".
std::string format_duration(std::chrono::milliseconds duration);

} // namespace bisectd::base
