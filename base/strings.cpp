#include "base/strings.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace bisectd::base {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.emplace_back(text.substr(start));
      return parts;
    }
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
}

std::vector<std::string> split_lines(std::string_view text) {
  auto lines = split(text, '\n');
  for (auto& line : lines) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
  }
  if (!lines.empty() && lines.back().empty()) {
    lines.pop_back();
  }
  return lines;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      out += separator;
    }
    out += parts[i];
  }
  return out;
}

std::string_view trim(std::string_view text) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.starts_with(prefix); }
bool ends_with(std::string_view text, std::string_view suffix) { return text.ends_with(suffix); }

bool is_valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(name.front())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return lower_or_digit(c) || c == '.' || c == '_' || c == '-'; });
}

bool has_unsafe_chars(std::string_view text) {
  static constexpr std::string_view k_meta = " \t\n\r;&|`$<>(){}[]*?!\\\"'#~";
  return std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || k_meta.find(c) != std::string_view::npos;
  });
}

std::string short_sha(std::string_view sha, std::size_t n) { return std::string(sha.substr(0, n)); }

std::string shell_quote(std::string_view arg) {
  static constexpr std::string_view k_safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,+@%";
  // Reserved words are only recognised bare, in command position: quoted, they are plain words.
  static constexpr std::array<std::string_view, 19> k_reserved{
    "case", "do",     "done", "elif", "else",  "esac",  "fi", "for", "function", "if",
    "in",   "select", "then", "time", "until", "while", "[[", "]]",  "coproc"};
  bool reserved = std::find(k_reserved.begin(), k_reserved.end(), arg) != k_reserved.end();
  if (!arg.empty() && !reserved && arg.find_first_not_of(k_safe) == std::string_view::npos) {
    return std::string(arg);
  }
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string describe_argv(const std::vector<std::string>& argv) {
  std::vector<std::string> quoted;
  quoted.reserve(argv.size());
  for (const auto& arg : argv) {
    quoted.push_back(shell_quote(arg));
  }
  return join(quoted, " ");
}

bool same_secret(std::string_view expected, std::string_view given) {
  unsigned char difference = expected.empty() || given.size() != expected.size() ? 1 : 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    difference |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  }
  return difference == 0;
}

std::string signed_percent(double fraction) {
  if (std::isnan(fraction)) {
    return "n/a";
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", fraction * 100.0);
  return buffer;
}

std::string probability_percent(double probability) {
  if (std::isnan(probability)) {
    return "n/a";
  }
  if (probability > 0.999) {
    return "> 99.9%";
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", probability * 100.0);
  return buffer;
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

std::string file_name_safe(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
    c = keep ? c : '_';
  }
  return out;
}

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || i + length > text.size()) {
    return 0;
  }
  unsigned int code = length == 1 ? lead : length == 2 ? (lead & 0x1fU) : length == 3 ? (lead & 0x0fU) : (lead & 0x07U);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) {
      return 0;
    }
    code = (code << 6) | (byte(i + k) & 0x3fU);
  }
  static constexpr unsigned int k_min[] = {0, 0, 0x80, 0x800, 0x10000};
  bool overlong = code < k_min[length];
  bool surrogate = code >= 0xd800 && code <= 0xdfff;
  return (overlong || surrogate || code > 0x10ffff) ? 0 : length;
}

namespace {

void append_escape(std::string& out, const char* format, unsigned int value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, format, value);
  out += buffer;
}

} // namespace

std::string escape_control(std::string_view text, LineBreaks line_breaks) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = utf8_sequence_length(text, i);
    bool crlf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n'; // a lone CR could overwrite a line
    bool kept_break = line_breaks == LineBreaks::keep && (c == '\n' || c == '\t' || crlf);
    if (length == 0 || ((c < 0x20 || c == 0x7f) && !kept_break)) {
      append_escape(out, "\\x%02x", c); // a control character, or a byte no UTF-8 terminal can show
      ++i;
      continue;
    }
    auto second = length == 2 ? static_cast<unsigned char>(text[i + 1]) : 0U;
    if (c == 0xc2 && second < 0xa0) { // U+0080..U+009F: C1 controls (U+009B is CSI on some terminals)
      append_escape(out, "\\u%04x", second);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

bool is_mail_address(std::string_view address) {
  if (address.empty() || address.size() > k_max_mail_address || address.find('@') == std::string_view::npos) {
    return false;
  }
  return std::none_of(address.begin(), address.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string strip_url_userinfo(std::string_view text) {
  // An authority ends where a path, query or fragment starts, or where the URL ends inside a text: at whitespace,
  // a quote (a shell-quoted URL in a command) or '>' (a URL in <...>).
  static constexpr std::string_view k_authority_end = "/?#'\"<> \t\r\n";
  std::string out;
  std::size_t start = 0;
  while (true) {
    auto scheme_end = text.find("://", start);
    if (scheme_end == std::string_view::npos) {
      out.append(text.substr(start));
      return out;
    }
    std::size_t host = scheme_end + 3;
    std::size_t authority_end = std::min(text.find_first_of(k_authority_end, host), text.size());
    std::size_t at = text.substr(host, authority_end - host).rfind('@');
    out.append(text.substr(start, host - start));
    start = at == std::string_view::npos ? host : host + at + 1; // everything up to the last '@' is userinfo
  }
}

} // namespace bisectd::base
