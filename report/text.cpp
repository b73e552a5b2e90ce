#include "report/text.hpp"

#include "base/strings.hpp"

#include <cstdarg>
#include <cstdio>
#include <vector>

namespace bisectd::report {

std::string strprintf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out;
  if (size > 0) {
    std::vector<char> buffer(static_cast<std::size_t>(size) + 1);
    std::vsnprintf(buffer.data(), buffer.size(), format, args);
    out.assign(buffer.data(), static_cast<std::size_t>(size));
  }
  va_end(args);
  return out;
}

namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

} // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t length = base::utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string single_line(std::string_view text) {
  std::string clean = valid_utf8(text);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    bool space = c == ' ' || is_control(static_cast<unsigned char>(c));
    if (space) {
      if (!out.empty() && out.back() != ' ') {
        out += ' ';
      }
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out;
}

std::string metric_label(std::string_view name) {
  std::string clean = valid_utf8(name);
  std::string ascii;
  ascii.reserve(clean.size());
  for (std::size_t i = 0; i < clean.size(); ++i) {
    auto c = static_cast<unsigned char>(clean[i]);
    if (c >= 0x80) { // one '?' per code point: skip its continuation bytes
      while (i + 1 < clean.size() && (static_cast<unsigned char>(clean[i + 1]) & 0xc0U) == 0x80U) {
        ++i;
      }
    }
    ascii += c > 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (ascii.size() <= k_max_metric_label) {
    return ascii;
  }
  // The head names the family, the tail the leaf symbol of a call chain: both say more than the middle.
  constexpr std::size_t k_head = 40;
  constexpr std::size_t k_tail = k_max_metric_label - k_head - 3;
  return ascii.substr(0, k_head) + "..." + ascii.substr(ascii.size() - k_tail);
}

std::string multi_line(std::string_view text) {
  std::string clean = valid_utf8(text);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    if (c == '\r') {
      continue;
    }
    bool keep = c == '\n' || c == '\t' || !is_control(static_cast<unsigned char>(c));
    out += keep ? c : ' ';
  }
  return out;
}

std::string strip_trailing_space(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    bool has_newline = end != std::string_view::npos;
    std::string_view line = text.substr(start, has_newline ? end - start : std::string_view::npos);
    if (line != "-- ") {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) {
        line.remove_suffix(1);
      }
    }
    out.append(line);
    if (has_newline) {
      out += '\n';
    }
    start = has_newline ? end + 1 : text.size();
  }
  return out;
}

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return false;
    }
  }
  return true;
}

} // namespace bisectd::report
