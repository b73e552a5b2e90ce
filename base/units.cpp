#include "base/units.hpp"

#include "base/strings.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace bisectd::base {

namespace {

Result<double> parse_number(std::string_view text, std::string_view what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return make_error(ErrorCode::invalid_input, "not a " + std::string(what) + ": '" + std::string(text) + "'");
  }
  return value;
}

} // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  text = trim(text);
  double scale_ms = 1000.0;
  if (ends_with(text, "ms")) {
    scale_ms = 1.0;
    text.remove_suffix(2);
  } else if (ends_with(text, "s")) {
    text.remove_suffix(1);
  } else if (ends_with(text, "m")) {
    scale_ms = 60'000.0;
    text.remove_suffix(1);
  } else if (ends_with(text, "h")) {
    scale_ms = 3'600'000.0;
    text.remove_suffix(1);
  }
  auto value = parse_number(text, "duration (use e.g. 300s, 5m, 1h)");
  if (!value) {
    return std::unexpected(value.error());
  }
  if (*value < 0) {
    return make_error(ErrorCode::invalid_input, "negative duration");
  }
  return std::chrono::milliseconds(static_cast<long long>(std::llround(*value * scale_ms)));
}

Result<double> parse_percent(std::string_view text) {
  text = trim(text);
  bool percent = ends_with(text, "%");
  if (percent) {
    text.remove_suffix(1);
  }
  auto value = parse_number(text, "percentage (use e.g. 2%)");
  if (!value) {
    return std::unexpected(value.error());
  }
  return percent ? *value / 100.0 : *value;
}

std::string format_duration(std::chrono::milliseconds duration) {
  long long ms = duration.count();
  char buffer[64];
  if (ms < 60'000) {
    std::snprintf(buffer, sizeof buffer, "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3'600'000) {
    long long s = (ms / 1000) % 60;
    std::snprintf(buffer, sizeof buffer, s == 0 ? "%lldm" : "%lldm%02llds", ms / 60'000, s);
  } else {
    long long m = (ms / 60'000) % 60;
    std::snprintf(buffer, sizeof buffer, m == 0 ? "%lldh" : "%lldh%02lldm", ms / 3'600'000, m);
  }
  return buffer;
}

} // namespace bisectd::base
