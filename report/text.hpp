#pragma once
// Text helpers for report generation: printf-style formatting, UTF-8 and control-character cleanup.

#include <cstddef>
#include <string>
#include <string_view>

namespace bisectd::report {

// printf into a std::string (the "C" locale's number formats; callers never set another locale).
[[gnu::format(printf, 1, 2)]] std::string strprintf(const char* format, ...);

// Replaces invalid UTF-8 sequences with U+FFFD so every later step works on valid UTF-8.
std::string valid_utf8(std::string_view text);

// One line of text from untrusted input: valid UTF-8, every control character (CR, LF, TAB, ...)
// turned into a space, runs of spaces collapsed, ends trimmed.
std::string single_line(std::string_view text);

// A metric (or profiled symbol) name as a report shows it, whatever a benchmark or a profile printed: printable
// ASCII only (every other character, CR, LF, spaces, non-ASCII and invalid UTF-8 included, becomes one '?'), and at
// most k_max_metric_label characters (a longer name keeps its head and tail around "..."). The one place such
// names are made safe for the mail's table, subject and notes.
inline constexpr std::size_t k_max_metric_label = 120;
std::string metric_label(std::string_view name);

// Multi-line text: valid UTF-8, CR removed, other control characters except LF/TAB turned into spaces.
std::string multi_line(std::string_view text);

// Removes trailing spaces/tabs from every line (the "-- " signature separator is kept).
std::string strip_trailing_space(std::string_view text);

// True when every byte is 7-bit ASCII.
bool is_ascii(std::string_view text);

} // namespace bisectd::report
