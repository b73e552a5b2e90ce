#pragma once
// Lists of strings (a tree's branches and notify list, a report's recipients) as the JSON arrays the schema has
// always stored them as, so the file stays readable with sqlite3's json functions.

#include <string>
#include <string_view>
#include <vector>

namespace bisectd::storage {

// ["a","b"] with JSON string escapes.
std::string encode_string_list(const std::vector<std::string>& items);
// The strings of a JSON array of strings; anything else (malformed text, non-string items) is skipped.
std::vector<std::string> decode_string_list(std::string_view text);

} // namespace bisectd::storage
