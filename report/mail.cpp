#include "report/mail.hpp"

#include "base/hash.hpp"
#include "base/strings.hpp"
#include "report/mime.hpp"
#include "report/text.hpp"

namespace bisectd::report {

namespace {

constexpr std::size_t k_max_smtp_line = 998;

std::vector<std::string> msg_id_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string clean = single_line(text);
  std::size_t start = 0;
  while (start < clean.size()) {
    std::size_t end = clean.find(' ', start);
    end = end == std::string::npos ? clean.size() : end;
    std::string id = normalize_message_id(std::string_view(clean).substr(start, end - start));
    if (!id.empty()) {
      tokens.push_back(id);
    }
    start = end + 1;
  }
  return tokens;
}

// Body with CRLF line ends and a final line break.
std::string crlf_body(std::string_view body) {
  std::string text = multi_line(body);
  std::string out;
  out.reserve(text.size() + text.size() / 32);
  for (char c : text) {
    if (c == '\n') {
      out += "\r\n";
    } else {
      out += c;
    }
  }
  if (!out.ends_with("\r\n")) {
    out += "\r\n";
  }
  return out;
}

bool has_long_line(std::string_view crlf_text) {
  std::size_t start = 0;
  while (start < crlf_text.size()) {
    std::size_t end = crlf_text.find("\r\n", start);
    end = end == std::string_view::npos ? crlf_text.size() : end;
    if (end - start > k_max_smtp_line) {
      return true;
    }
    start = end + 2;
  }
  return false;
}

// The Content-Type/Content-Transfer-Encoding lines and the encoded content of a text part.
struct TextPart {
  std::string headers, content;
};

TextPart text_part(std::string_view text_lf) {
  std::string text = crlf_body(text_lf);
  bool ascii = is_ascii(text);
  bool long_lines = has_long_line(text);
  TextPart part;
  part.headers = ascii ? "Content-Type: text/plain; charset=us-ascii" : "Content-Type: text/plain; charset=utf-8";
  part.headers += long_lines ? "\r\nContent-Transfer-Encoding: quoted-printable\r\n"
                             : (ascii ? "\r\nContent-Transfer-Encoding: 7bit\r\n"
                                      : "\r\nContent-Transfer-Encoding: 8bit\r\n");
  part.content = long_lines ? quoted_printable(text) : text;
  return part;
}

// A file name safe in a quoted header parameter and on any file system; never empty or hidden.
std::string attachment_name(std::string_view name) {
  std::string safe = base::file_name_safe(single_line(name));
  while (!safe.empty() && safe.front() == '.') {
    safe.erase(0, 1);
  }
  return safe.empty() ? "attachment.txt" : safe.substr(0, 64);
}

// The same parts give the same boundary (renders are reproducible); a part that contains it gets another.
std::string boundary_for(const std::vector<TextPart>& parts) {
  std::string all;
  for (const auto& part : parts) {
    all += part.content;
  }
  for (int salt = 0;; ++salt) {
    std::string boundary = "=_bisectd_" + base::hash_hex(all + std::to_string(salt)).substr(0, 24);
    if (all.find("--" + boundary) == std::string::npos) {
      return boundary;
    }
  }
}

} // namespace

std::string Mail::render() const {
  std::string out;
  auto from_tokens = address_list_tokens({from});
  out += fold_header("From", from_tokens.empty() ? std::vector<std::string>{"bisectd@localhost"} : from_tokens);
  auto to_tokens = address_list_tokens(to);
  out += fold_header("To", to_tokens.empty() ? std::vector<std::string>{"undisclosed-recipients:;"} : to_tokens);
  if (auto cc_tokens = address_list_tokens(cc); !cc_tokens.empty()) {
    out += fold_header("Cc", cc_tokens);
  }
  out += fold_header("Subject", unstructured_tokens(subject));
  out += fold_header("Date", {single_line(date)});
  if (auto id = msg_id_tokens(message_id); !id.empty()) {
    out += fold_header("Message-ID", {id.front()});
  }
  if (auto reply = msg_id_tokens(in_reply_to); !reply.empty()) {
    out += fold_header("In-Reply-To", {reply.front()});
  }
  if (auto refs = msg_id_tokens(references); !refs.empty()) {
    out += fold_header("References", refs);
  }
  out += "MIME-Version: 1.0\r\n";
  TextPart main = text_part(body);
  if (attachments.empty()) {
    return out + main.headers + "\r\n" + main.content;
  }
  std::vector<TextPart> parts{main};
  for (const auto& attachment : attachments) {
    TextPart part = text_part(attachment.text);
    std::string name = attachment_name(attachment.name);
    part.headers.insert(part.headers.find("\r\n"), "; name=\"" + name + "\"");
    part.headers += "Content-Disposition: attachment; filename=\"" + name + "\"\r\n";
    parts.push_back(std::move(part));
  }
  std::string boundary = boundary_for(parts);
  out += "Content-Type: multipart/mixed; boundary=\"" + boundary + "\"\r\n\r\n";
  out += "This is a multi-part message in MIME format.\r\n";
  parts.front().headers += "Content-Disposition: inline\r\n";
  for (const auto& part : parts) {
    out += "\r\n--" + boundary + "\r\n" + part.headers + "\r\n" + part.content;
    if (!out.ends_with("\r\n")) {
      out += "\r\n";
    }
  }
  return out + "\r\n--" + boundary + "--\r\n";
}

std::vector<std::string> Mail::envelope_recipients() const {
  std::vector<std::string> out;
  for (const auto* list : {&to, &cc}) {
    for (const auto& entry : *list) {
      if (auto address = parse_address(entry)) {
        out.push_back(address->addr);
      }
    }
  }
  return out;
}

} // namespace bisectd::report
