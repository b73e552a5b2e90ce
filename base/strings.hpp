#pragma once
// Small string helpers shared by every layer.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::base {

std::vector<std::string> split(std::string_view text, char separator);
std::vector<std::string> split_lines(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::string_view trim(std::string_view text);
std::string to_lower(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);

// True for names like tree or job names: [a-z0-9][a-z0-9._-]*, at most 64 characters.
bool is_valid_name(std::string_view name);

// True when `text` has a control character, a space or a shell metacharacter.
bool has_unsafe_chars(std::string_view text);

// `text` usable in a file name: letters, digits, '.', '_' and '-' kept, every other byte '_'.
std::string file_name_safe(std::string_view text);

// Appends the code point `code` (at most 0x10FFFF) to `out` as UTF-8.
void append_utf8(std::string& out, std::uint32_t code);

// The first `n` characters of a sha (or the whole string when shorter).
std::string short_sha(std::string_view sha, std::size_t n = 10);

// A relative change as a signed percentage with one decimal: 0.0123 -> "+1.2%", -0.5 -> "-50.0%"; NaN -> "n/a".
std::string signed_percent(double fraction);

// Quotes `arg` for a POSIX shell: 'it'\''s' style; the one quoting function for anything sent to a remote shell
// (lab/ssh_remote.hpp joins argv with it). Left bare only when made of [A-Za-z0-9_./:,+@%-] (no '=', so a bare
// word is never read as an assignment). A NUL cannot pass through a shell: callers reject it.
std::string shell_quote(std::string_view arg);

// Renders an argv for logs: each element shell-quoted when needed.
std::string describe_argv(const std::vector<std::string>& argv);

} // namespace bisectd::base
