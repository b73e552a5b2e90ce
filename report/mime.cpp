#include "report/mime.hpp"

#include "report/text.hpp"

#include <chrono>

namespace bisectd::report {

namespace {

constexpr std::size_t k_max_line = 78;
constexpr std::size_t k_max_name = 200;
constexpr std::string_view k_atext_specials = "!#$%&'*+-/=?^_`{|}~";

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_atext(char c) { return is_alnum(c) || k_atext_specials.find(c) != std::string_view::npos; }

bool is_valid_msg_id_part(std::string_view part) {
  if (part.empty() || part.front() == '.' || part.back() == '.') {
    return false;
  }
  for (char c : part) {
    if (!is_atext(c) && c != '.') {
      return false;
    }
  }
  return true;
}

// Cuts UTF-8 `text` to at most `limit` bytes without splitting a character.
std::string cut_utf8(std::string text, std::size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) {
    --end;
  }
  text.resize(end);
  return text;
}

std::string base64(std::string_view data) {
  static constexpr char k_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < data.size(); i += 3) {
    unsigned int chunk = static_cast<unsigned char>(data[i]) << 16;
    std::size_t left = data.size() - i;
    if (left > 1) {
      chunk |= static_cast<unsigned char>(data[i + 1]) << 8;
    }
    if (left > 2) {
      chunk |= static_cast<unsigned char>(data[i + 2]);
    }
    out += k_digits[(chunk >> 18) & 63];
    out += k_digits[(chunk >> 12) & 63];
    out += left > 1 ? k_digits[(chunk >> 6) & 63] : '=';
    out += left > 2 ? k_digits[chunk & 63] : '=';
  }
  return out;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    end = end == std::string_view::npos ? text.size() : end;
    if (end > start) {
      words.emplace_back(text.substr(start, end - start));
    }
    start = end + 1;
  }
  return words;
}

} // namespace

bool is_valid_addr_spec(std::string_view addr) {
  std::size_t at = addr.rfind('@');
  if (addr.size() > 254 || at == std::string_view::npos) {
    return false;
  }
  std::string_view local = addr.substr(0, at);
  std::string_view domain = addr.substr(at + 1);
  if (!is_valid_msg_id_part(local) || domain.empty() || domain.front() == '.' || domain.back() == '.' ||
      domain.front() == '-') {
    return false;
  }
  for (char c : domain) {
    if (!is_alnum(c) && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

std::optional<Address> parse_address(std::string_view text) {
  Address address;
  std::size_t open = text.find('<');
  std::size_t close = open == std::string_view::npos ? open : text.find('>', open);
  if (close != std::string_view::npos) {
    address.addr = std::string(text.substr(open + 1, close - open - 1));
    std::string name = single_line(text.substr(0, open));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      std::string unquoted;
      for (std::size_t i = 1; i + 1 < name.size(); ++i) {
        if (name[i] == '\\' && i + 2 < name.size()) {
          ++i;
        }
        unquoted += name[i];
      }
      name = unquoted;
    }
    address.name = cut_utf8(single_line(name), k_max_name);
  } else {
    // A bare address, optionally followed by a "# comment" (trailers) or "(role)" (get_maintainer.pl).
    std::string_view rest = text.substr(0, text.find('#'));
    rest = rest.substr(0, rest.find('('));
    auto words = split_words(single_line(rest));
    if (words.size() == 1) {
      address.addr = words.front();
    }
  }
  if (!is_valid_addr_spec(address.addr)) {
    return std::nullopt;
  }
  return address;
}

std::string format_address(const Address& address) {
  // A bare address that contains '#' (valid in a local part) would read back as "addr # comment": bracket it.
  if (address.name.empty()) {
    return address.addr.find('#') == std::string::npos ? address.addr : "<" + address.addr + ">";
  }
  return address.name + " <" + address.addr + ">";
}

std::vector<std::string> encoded_words(std::string_view text) {
  // 36 input bytes give 48 base64 characters: "=?UTF-8?B?" + 48 + "?=" is 60, so even "Subject: " plus one
  // word stays within the 76 characters RFC 2047 allows on a line with encoded words.
  constexpr std::size_t k_chunk = 36;
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = std::min(text.size(), start + k_chunk);
    while (end < text.size() && end > start + 1 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) {
      --end;
    }
    words.push_back("=?UTF-8?B?" + base64(text.substr(start, end - start)) + "?=");
    start = end;
  }
  return words;
}

std::vector<std::string> display_name_tokens(std::string_view name) {
  std::string clean = cut_utf8(single_line(name), k_max_name);
  if (clean.empty()) {
    return {};
  }
  if (!is_ascii(clean) || clean.find("=?") != std::string::npos) {
    return encoded_words(clean);
  }
  bool all_atoms = true;
  for (char c : clean) {
    all_atoms = all_atoms && (is_atext(c) || c == ' ');
  }
  if (all_atoms) {
    return split_words(clean);
  }
  std::string quoted = "\"";
  for (char c : clean) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
    }
    quoted += c;
  }
  return {quoted + "\""};
}

std::vector<std::string> unstructured_tokens(std::string_view value) {
  std::string clean = single_line(value);
  std::vector<std::string> words = split_words(clean);
  bool needs_encoding = !is_ascii(clean) || clean.find("=?") != std::string::npos;
  for (const auto& word : words) {
    needs_encoding = needs_encoding || word.size() > k_max_line - 10;
  }
  return needs_encoding ? encoded_words(clean) : words;
}

std::vector<std::string> address_list_tokens(const std::vector<std::string>& addresses) {
  std::vector<std::string> tokens;
  for (const auto& text : addresses) {
    auto address = parse_address(text);
    if (!address) {
      continue;
    }
    if (!tokens.empty()) {
      tokens.back() += ',';
    }
    auto name = display_name_tokens(address->name);
    if (name.empty()) {
      tokens.push_back(address->addr);
      continue;
    }
    tokens.insert(tokens.end(), name.begin(), name.end());
    tokens.push_back("<" + address->addr + ">");
  }
  return tokens;
}

std::string fold_header(std::string_view name, const std::vector<std::string>& tokens) {
  std::string out;
  std::string line = std::string(name) + ":";
  bool line_has_token = false;
  for (const auto& token : tokens) {
    if (line_has_token && line.size() + 1 + token.size() > k_max_line) {
      out += line + "\r\n";
      line.clear();
    }
    line += " " + token;
    line_has_token = true;
  }
  return out + line + "\r\n";
}

std::string quoted_printable(std::string_view text) {
  constexpr std::size_t k_max_qp = 76;
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  std::size_t column = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      out += "\r\n";
      column = 0;
      ++i;
      continue;
    }
    bool at_line_end = i + 1 == text.size() || text[i + 1] == '\r';
    auto byte = static_cast<unsigned char>(c);
    bool literal = (byte >= 33 && byte <= 126 && c != '=') || ((c == ' ' || c == '\t') && !at_line_end);
    std::string piece = literal ? std::string(1, c) : std::string{'=', k_hex[byte >> 4], k_hex[byte & 15]};
    if (column + piece.size() > k_max_qp - 1) {
      out += "=\r\n";
      column = 0;
    }
    out += piece;
    column += piece.size();
  }
  return out;
}

std::string rfc5322_date(std::int64_t unix_seconds) {
  using namespace std::chrono;
  static constexpr const char* k_days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  sys_seconds time{seconds{unix_seconds}};
  auto day = floor<days>(time);
  year_month_day ymd{day};
  hh_mm_ss hms{time - day};
  return strprintf("%s, %02u %s %04d %02lld:%02lld:%02lld +0000", k_days[weekday{day}.c_encoding()],
                   static_cast<unsigned>(ymd.day()), k_months[static_cast<unsigned>(ymd.month()) - 1],
                   static_cast<int>(ymd.year()), static_cast<long long>(hms.hours().count()),
                   static_cast<long long>(hms.minutes().count()), static_cast<long long>(hms.seconds().count()));
}

std::string normalize_message_id(std::string_view text) {
  std::string id = single_line(text);
  if (id.starts_with("http://") || id.starts_with("https://")) {
    while (!id.empty() && id.back() == '/') {
      id.pop_back();
    }
    id = id.substr(id.rfind('/') + 1);
    for (std::size_t pos; (pos = id.find("%40")) != std::string::npos;) {
      id.replace(pos, 3, "@");
    }
  }
  if (id.size() >= 2 && id.front() == '<' && id.back() == '>') {
    id = id.substr(1, id.size() - 2);
  }
  std::size_t at = id.rfind('@');
  if (id.size() > 900 || at == std::string::npos || !is_valid_msg_id_part(id.substr(0, at)) ||
      !is_valid_msg_id_part(id.substr(at + 1))) {
    return "";
  }
  return "<" + id + ">";
}

} // namespace bisectd::report
