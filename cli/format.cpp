#include "cli/format.hpp"

#include "base/strings.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace bisectd::cli {

std::string field_text(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) {
    return "-";
  }
  const auto& value = object[key];
  if (value.is_string()) { // a table cell or one line: a newline or an escape from a tree shows as `\x..`
    return base::escape_control(value.get<std::string>(), base::LineBreaks::escape);
  }
  if (value.is_number()) {
    return format_number(value.get<double>());
  }
  if (value.is_boolean()) {
    return value.get<bool>() ? "yes" : "no";
  }
  return value.is_null() ? "-" : value.dump();
}

bool is_full_sha(const std::string& text) {
  if (text.size() != 40 && text.size() != 64) {
    return false;
  }
  return text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string field_sha(const nlohmann::json& object, const char* key) {
  std::string text = field_text(object, key);
  return is_full_sha(text) ? base::short_sha(text) : text;
}

std::optional<double> field_number(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) {
    return std::nullopt;
  }
  return object[key].get<double>();
}

std::int64_t field_int(const nlohmann::json& object, const char* key) {
  auto value = field_number(object, key);
  return value ? static_cast<std::int64_t>(std::llround(*value)) : 0;
}

std::string format_number(double value) {
  if (!std::isfinite(value)) {
    return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  }
  char buffer[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else if (std::fabs(value) >= 1e6 || std::fabs(value) < 1e-4) {
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
  }
  return buffer;
}

std::string format_probability(std::optional<double> p) {
  if (!p) {
    return "-";
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", *p);
  return buffer;
}

std::optional<std::int64_t> parse_iso8601(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::int64_t seconds = timegm(&tm);
  std::string rest = text.substr(static_cast<std::size_t>(consumed));
  std::size_t pos = 0;
  if (pos < rest.size() && rest[pos] == '.') { // fractional seconds: ignored
    pos = rest.find_first_not_of("0123456789", pos + 1);
    pos = pos == std::string::npos ? rest.size() : pos;
  }
  int off_h = 0;
  int off_m = 0;
  if (pos < rest.size() && (rest[pos] == '+' || rest[pos] == '-') &&
      std::sscanf(rest.c_str() + pos + 1, "%2d:%2d", &off_h, &off_m) == 2) {
    int sign = rest[pos] == '+' ? 1 : -1;
    seconds -= sign * (off_h * 3600 + off_m * 60);
  }
  return seconds;
}

std::string format_age(const nlohmann::json& object, const char* key, std::int64_t now) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) {
    return "-";
  }
  auto at = parse_iso8601(object[key].get<std::string>());
  if (!at) {
    return "-";
  }
  std::int64_t age = std::max<std::int64_t>(now - *at, 0);
  if (age < 60) {
    return std::to_string(age) + "s";
  }
  if (age < 3600) {
    return std::to_string(age / 60) + "m";
  }
  if (age < 86400) {
    return std::to_string(age / 3600) + "h";
  }
  return std::to_string(age / 86400) + "d";
}

} // namespace bisectd::cli
