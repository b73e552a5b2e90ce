#pragma once
// Turning API JSON values into table cells: missing or null fields print as "-", shas are
// shortened, probabilities and relative changes get fixed formats.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace bisectd::cli {

// The field as text: strings with control characters shown (base::escape_control, one line), numbers via
// format_number, booleans yes/no, null/missing "-".
std::string field_text(const nlohmann::json& object, const char* key);

// The field as a 10-character sha when it is a 40/64-hex sha, as-is otherwise, "-" when null.
std::string field_sha(const nlohmann::json& object, const char* key);

// The field as a double; nullopt when missing, null or not a number.
std::optional<double> field_number(const nlohmann::json& object, const char* key);

// The field as an integer (0 when missing or not a number).
std::int64_t field_int(const nlohmann::json& object, const char* key);

// Up to 6 significant digits without exponent for everyday magnitudes: 1234.5, 0.0123, 3.
std::string format_number(double value);

// "0.997"; "-" when absent.
std::string format_probability(std::optional<double> p);


// True for a full hex object id (40 or 64 characters).
bool is_full_sha(const std::string& text);

// Seconds since the epoch from "2026-11-29T22:06:37Z" (fractional seconds and offsets +hh:mm allowed).
std::optional<std::int64_t> parse_iso8601(const std::string& text);

// A compact age: "45s", "12m", "3h", "5d"; "-" when the timestamp is missing or unparsable.
std::string format_age(const nlohmann::json& object, const char* key, std::int64_t now);


} // namespace bisectd::cli
