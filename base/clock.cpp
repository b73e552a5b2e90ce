#include "base/clock.hpp"

#include <chrono>
#include <ctime>

namespace bisectd::base {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

namespace {
std::string format_utc(std::int64_t unix_seconds, const char* format) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, format, &tm);
  return buffer;
}
} // namespace

std::string iso8601_utc(std::int64_t unix_seconds) { return format_utc(unix_seconds, "%Y-%m-%dT%H:%M:%SZ"); }

std::string rfc5322_date(std::int64_t unix_seconds) { return format_utc(unix_seconds, "%a, %d %b %Y %H:%M:%S +0000"); }

} // namespace bisectd::base
