#pragma once
// Shell-style wildcards on names (`bisectctl results --metric 'proc-vmstat.*'`): the pattern is checked once,
// then matched against whole names.

#include <optional>
#include <string>
#include <string_view>

namespace bisectd::base {

// Why `pattern` is not a wildcard pattern, or nullopt when it is one. Its language: `*` any run of characters
// (none included), `?` one character, `[abc]`, `[a-z]`, `[!a-z]` one character of (not of) a set, `\x` the
// character x itself; anything else stands for itself. Refused: an empty pattern, an unclosed or empty `[...]`,
// a trailing `\`, a control character, more than 256 characters.
std::optional<std::string> glob_error(std::string_view pattern);

// True when the whole of `name` matches `pattern` (a pattern glob_error accepts; another matches nothing).
// Linear in the product of the lengths at worst: no backtracking blow-up.
bool glob_match(std::string_view pattern, std::string_view name);

} // namespace bisectd::base
