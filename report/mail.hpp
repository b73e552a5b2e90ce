#pragma once
// A rendered mail: plain fields in, one well-formed RFC 5322 message out.

#include <string>
#include <vector>

namespace bisectd::report {

// A text file sent along with the mail (the job file a reader reproduces with).
struct Attachment {
  std::string name; // the file name offered to the reader; made safe (letters, digits, '.', '_', '-') when rendering
  std::string text; // UTF-8 text (invalid sequences are replaced)
};

struct Mail {
  std::string from;            // "Name <addr>"; "bisectd@localhost" when not a valid address
  std::vector<std::string> to; // "Name <addr>" or "addr"; invalid entries are dropped when rendering
  std::vector<std::string> cc;
  std::string subject;     // plain UTF-8, one line (control characters are flattened)
  std::string message_id;  // "<id@host>"
  std::string in_reply_to; // "<id@host>" or empty
  std::string references;  // space-separated "<id@host>" list or empty
  std::string date;        // RFC 5322 date
  std::string body;        // UTF-8 text, LF line ends
  std::vector<Attachment> attachments; // none: a text/plain message; else multipart/mixed, the body first

  // The full message: CRLF line ends, RFC 2047 encoded and folded headers, 8bit UTF-8 body (quoted-printable
  // when a line is too long for SMTP), each attachment a text/plain part of its own. No field content can add a
  // header line, no part's content can end its part (the boundary is checked against every part).
  [[nodiscard]] std::string render() const;

  // All envelope recipients (To then Cc) as bare addresses.
  [[nodiscard]] std::vector<std::string> envelope_recipients() const;
};

} // namespace bisectd::report
