#include "mail_check.hpp"

#include <cctype>

namespace bisectd::report::testing {

namespace {

std::string base64_decode(const std::string& text) {
  static const std::string k_digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned int buffer = 0;
  int bits = 0;
  for (char c : text) {
    auto index = k_digits.find(c);
    if (index == std::string::npos) {
      continue;
    }
    buffer = (buffer << 6) | static_cast<unsigned int>(index);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

bool is_encoded_word(const std::string& word) {
  return word.starts_with("=?UTF-8?B?") && word.ends_with("?=") && word.size() <= 75;
}

} // namespace

ParsedMail parse_rendered(const std::string& message) {
  ParsedMail mail;
  std::size_t start = 0;
  while (true) {
    std::size_t end = message.find("\r\n", start);
    if (end == std::string::npos) {
      mail.problem = "header section not terminated";
      return mail;
    }
    std::string line = message.substr(start, end - start);
    start = end + 2;
    if (line.empty()) {
      break;
    }
    for (char c : line) {
      if (c == '\r' || c == '\n' || static_cast<unsigned char>(c) >= 0x80 || (c < 0x20 && c != '\t')) {
        mail.problem = "bad character in header line: " + line;
        return mail;
      }
    }
    if (line.size() > 998) {
      mail.problem = "header line too long";
      return mail;
    }
    if (line[0] == ' ' || line[0] == '\t') {
      if (mail.headers.empty()) {
        mail.problem = "continuation before first field";
        return mail;
      }
      mail.headers.back().second += line;
      continue;
    }
    auto colon = line.find(':');
    bool name_ok = colon != std::string::npos && colon > 0;
    for (std::size_t i = 0; name_ok && i < colon; ++i) {
      name_ok = std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '-';
    }
    if (!name_ok) {
      mail.problem = "not a header field: " + line;
      return mail;
    }
    mail.headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
  }
  mail.body = message.substr(start);
  for (std::size_t i = 0; i < mail.body.size(); ++i) {
    bool crlf = mail.body[i] == '\r' && i + 1 < mail.body.size() && mail.body[i + 1] == '\n';
    if ((mail.body[i] == '\r' && !crlf) || (mail.body[i] == '\n' && (i == 0 || mail.body[i - 1] != '\r'))) {
      mail.problem = "bare CR or LF in body";
    }
  }
  return mail;
}

std::string decode_words(const std::string& value) {
  std::string out;
  bool previous_encoded = false;
  std::size_t start = 0;
  while (start < value.size()) {
    std::size_t end = value.find_first_of(" \t", start);
    end = end == std::string::npos ? value.size() : end;
    std::string word = value.substr(start, end - start);
    start = end + 1;
    if (word.empty()) {
      continue;
    }
    bool encoded = is_encoded_word(word);
    if (!out.empty() && !(encoded && previous_encoded)) {
      out += ' ';
    }
    out += encoded ? base64_decode(word.substr(10, word.size() - 12)) : word;
    previous_encoded = encoded;
  }
  return out;
}

std::vector<std::string> header_values(const ParsedMail& mail, const std::string& name) {
  std::vector<std::string> values;
  for (const auto& [key, value] : mail.headers) {
    if (key == name) {
      values.push_back(value);
    }
  }
  return values;
}

} // namespace bisectd::report::testing
