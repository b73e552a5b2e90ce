#include "storage/string_list.hpp"

#include "base/strings.hpp"

#include <cstdint>
#include <cstdio>

namespace bisectd::storage {

namespace {

bool read_hex4(std::string_view text, std::size_t at, std::uint32_t& code) {
  if (at + 4 > text.size()) {
    return false;
  }
  code = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    char c = text[i];
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) {
      return false;
    }
    code = code * 16 + static_cast<std::uint32_t>(digit);
  }
  return true;
}

// Reads the JSON string whose opening quote is text[i]; returns the index after its closing quote, or npos.
std::size_t read_string(std::string_view text, std::size_t i, std::string& out) {
  for (++i; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      return i + 1;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= text.size()) {
      return std::string_view::npos;
    }
    switch (text[i]) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'u': {
      std::uint32_t code = 0;
      if (!read_hex4(text, i + 1, code)) {
        return std::string_view::npos;
      }
      i += 4;
      std::uint32_t low = 0;
      if (code >= 0xD800 && code < 0xDC00 && i + 2 < text.size() && text[i + 1] == '\\' && text[i + 2] == 'u' &&
          read_hex4(text, i + 3, low) && low >= 0xDC00 && low < 0xE000) {
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        i += 6;
      }
      base::append_utf8(out, code);
      break;
    }
    default: out += text[i]; break; // \" \\ \/
    }
  }
  return std::string_view::npos;
}

} // namespace

std::string encode_string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& item : items) {
    out += out.size() > 1 ? ",\"" : "\"";
    for (char c : item) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
        out += escaped;
      } else {
        out += c;
      }
    }
    out += '"';
  }
  return out + "]";
}

std::vector<std::string> decode_string_list(std::string_view text) {
  std::vector<std::string> out;
  auto i = text.find('[');
  if (i == std::string_view::npos) {
    return out;
  }
  for (++i; i < text.size() && text[i] != ']'; ++i) {
    if (text[i] != '"') {
      continue; // separators, whitespace; non-string items are skipped character by character
    }
    std::string item;
    i = read_string(text, i, item);
    if (i == std::string_view::npos) {
      return out;
    }
    out.push_back(std::move(item));
    --i;
  }
  return out;
}

} // namespace bisectd::storage
