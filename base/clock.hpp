#pragma once
// Wall-clock time for timestamps in storage and reports.

#include <cstdint>
#include <string>

namespace bisectd::base {

// Seconds since the Unix epoch.
std::int64_t unix_now();

// Milliseconds since the Unix epoch.
std::int64_t unix_now_ms();

// "2026-11-29T22:06:37Z"
std::string iso8601_utc(std::int64_t unix_seconds);

// "Sun, 29 Nov 2026 22:06:37 +0000" (RFC 5322 Date header)
std::string rfc5322_date(std::int64_t unix_seconds);

} // namespace bisectd::base
