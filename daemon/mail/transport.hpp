#pragma once
// Delivery of rendered report mails: an mbox file (the embedded default), SMTP through libcurl, or sendmail.
// The outbox calls deliver() and retries on ErrorCode::unreachable; every other error is permanent.

#include "base/error.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::daemon::mail {

struct Transport {
  enum class Kind { mbox, smtp, sendmail } kind = Kind::mbox;
  std::filesystem::path mbox_path; // mbox: appended to, created if missing
  std::string smtp_url;            // smtp://host:port (plain or STARTTLS) or smtps://host:port
  bool starttls = false;           // smtp:// only: require STARTTLS
  std::string user, password;      // SMTP AUTH when `user` is set
  std::string sendmail_path = "/usr/sbin/sendmail";
  std::chrono::seconds connect_timeout{30}; // smtp: connecting
  std::chrono::seconds timeout{300};        // smtp/sendmail: the whole delivery
};

// Delivers `message` (full RFC 5322 text, CRLF or LF line ends) from `from` to all `recipients` (bare
// addresses). Errors are one line: ErrorCode::unreachable when the server refused or dropped the connection
// or answered 4xx (retry later); invalid_input for bad addresses or a 5xx refusal; invalid_config for failed
// login/TLS; io for mbox file errors.
Status deliver(const Transport& transport, const std::string& from, const std::vector<std::string>& recipients,
               const std::string& message);

// "Jane Doe <j@x.org>" -> "j@x.org"; a bare address is returned trimmed.
std::string bare_address(std::string_view name_addr);

// A bare addr-spec safe for an SMTP envelope and a sendmail argv: one '@', no spaces, controls, brackets, non-ASCII
// or leading '-'. deliver() refuses a message with any other recipient.
bool is_envelope_address(std::string_view addr);

} // namespace bisectd::daemon::mail
