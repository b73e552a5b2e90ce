#pragma once
// Test helpers: a strict reader of rendered messages, and an RFC 2047 decoder to check round trips.

#include <string>
#include <utility>
#include <vector>

namespace bisectd::report::testing {

struct ParsedMail {
  std::vector<std::pair<std::string, std::string>> headers; // name, unfolded raw value
  std::string body;
  std::string problem; // empty when well-formed
};

// Splits a rendered message; `problem` names the first violation (bare CR/LF, non-ASCII or long header line,
// a line that is neither a field nor a continuation).
ParsedMail parse_rendered(const std::string& message);

// The unfolded value's text with encoded words decoded (adjacent encoded words joined without space).
std::string decode_words(const std::string& value);

// The values of every header named `name` (case-sensitive).
std::vector<std::string> header_values(const ParsedMail& mail, const std::string& name);

} // namespace bisectd::report::testing
