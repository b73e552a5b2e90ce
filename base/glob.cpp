#include "base/glob.hpp"

namespace bisectd::base {

namespace {

constexpr std::size_t k_max_pattern = 256;

// The length of the `[...]` set that starts at `at` (the '['), 0 when it is not closed or is empty.
std::size_t set_length(std::string_view pattern, std::size_t at) {
  std::size_t i = at + 1;
  if (i < pattern.size() && pattern[i] == '!') {
    ++i;
  }
  std::size_t first = i;
  // A ']' right after '[' or '[!' is a member, as in the shell.
  if (i < pattern.size() && pattern[i] == ']') {
    ++i;
  }
  while (i < pattern.size() && pattern[i] != ']') {
    ++i;
  }
  return i < pattern.size() && i > first ? i - at + 1 : 0;
}

// Whether `c` is in the set `set` ("[...]" whole).
bool in_set(std::string_view set, char c) {
  std::string_view members = set.substr(1, set.size() - 2);
  bool negated = !members.empty() && members.front() == '!';
  if (negated) {
    members.remove_prefix(1);
  }
  bool found = false;
  for (std::size_t i = 0; i < members.size() && !found; ++i) {
    if (i + 2 < members.size() && members[i + 1] == '-') {
      found = members[i] <= c && c <= members[i + 2];
      i += 2;
    } else {
      found = members[i] == c;
    }
  }
  return found != negated;
}

// One pattern element at `p`: how long it is, and whether it matches `c` (never for '*').
struct Element {
  std::size_t length = 1;
  bool star = false;
  bool matches = false;
};

Element element_at(std::string_view pattern, std::size_t p, char c) {
  char head = pattern[p];
  if (head == '*') {
    return {1, true, false};
  }
  if (head == '?') {
    return {1, false, true};
  }
  if (head == '\\' && p + 1 < pattern.size()) {
    return {2, false, pattern[p + 1] == c};
  }
  if (head == '[') {
    if (std::size_t length = set_length(pattern, p); length > 0) {
      return {length, false, in_set(pattern.substr(p, length), c)};
    }
  }
  return {1, false, head == c};
}

} // namespace

std::optional<std::string> glob_error(std::string_view pattern) {
  if (pattern.empty()) {
    return "an empty pattern matches nothing";
  }
  if (pattern.size() > k_max_pattern) {
    return "a pattern of more than " + std::to_string(k_max_pattern) + " characters";
  }
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    auto c = static_cast<unsigned char>(pattern[i]);
    if (c < 0x20 || c == 0x7f) {
      return "a control character at position " + std::to_string(i + 1);
    }
    if (pattern[i] == '\\') {
      if (i + 1 == pattern.size()) {
        return "a trailing '\\' escapes nothing";
      }
      ++i;
    } else if (pattern[i] == '[') {
      std::size_t length = set_length(pattern, i);
      if (length == 0) {
        return "the '[' at position " + std::to_string(i + 1) + " opens a set that is empty or never closed";
      }
      i += length - 1;
    }
  }
  return std::nullopt;
}

bool glob_match(std::string_view pattern, std::string_view name) {
  if (glob_error(pattern)) {
    return false;
  }
  // The classic two-pointer match: on a mismatch, retry from the last '*' with one more character eaten.
  std::size_t p = 0, n = 0;
  std::size_t star_p = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size()) {
      Element e = element_at(pattern, p, name[n]);
      if (e.star) {
        star_p = p++;
        star_n = n;
        continue;
      }
      if (e.matches) {
        p += e.length;
        ++n;
        continue;
      }
    }
    if (star_p == std::string_view::npos) {
      return false;
    }
    p = star_p + 1;
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

} // namespace bisectd::base
