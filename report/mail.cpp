#include "report/mail.hpp"

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
  std::string text = crlf_body(body);
  bool ascii = is_ascii(text);
  bool long_lines = has_long_line(text);
  out += "MIME-Version: 1.0\r\n";
  out += ascii ? "Content-Type: text/plain; charset=us-ascii\r\n" : "Content-Type: text/plain; charset=utf-8\r\n";
  out += long_lines ? "Content-Transfer-Encoding: quoted-printable\r\n"
                    : (ascii ? "Content-Transfer-Encoding: 7bit\r\n" : "Content-Transfer-Encoding: 8bit\r\n");
  out += "\r\n";
  out += long_lines ? quoted_printable(text) : text;
  return out;
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
