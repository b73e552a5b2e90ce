// Mail delivery. Why three transports: mbox needs nothing (the demo default and a local archive), SMTP via
// libcurl reaches any relay with STARTTLS/AUTH, sendmail hands the mail to the local MTA's own queue.
// Error codes matter: the outbox retries ErrorCode::unreachable only as "try later", so a refused connection,
// a dropped connection or a 4xx answer must map to it, and a 5xx refusal must not.

#include "daemon/mail/transport.hpp"

#include "base/fd.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"

#include <curl/curl.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>

namespace bisectd::daemon::mail {

namespace {

Status check_addresses(const std::string& from, const std::vector<std::string>& recipients) {
  if (!is_envelope_address(from)) {
    return make_error(ErrorCode::invalid_input, "mail: invalid sender address '" + from + "'");
  }
  if (recipients.empty()) {
    return make_error(ErrorCode::invalid_input, "mail: no recipients");
  }
  for (const auto& recipient : recipients) {
    if (!is_envelope_address(recipient)) {
      return make_error(ErrorCode::invalid_input, "mail: invalid recipient address '" + recipient + "'");
    }
  }
  return {};
}

// `text` with every line ending turned into `eol`.
std::string with_line_ends(std::string_view text, std::string_view eol) {
  std::string out;
  out.reserve(text.size() + text.size() / 32);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;
    }
    if (text[i] == '\n') {
      out += eol;
    } else {
      out += text[i];
    }
  }
  return out;
}

// ---- mbox ------------------------------------------------------------------------------------------------

// "Sun Nov 29 22:14:40 2026" (asctime style, UTC, no locale).
std::string mbox_date(std::time_t now) {
  static constexpr const char* k_days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%s %s %2d %02d:%02d:%02d %d", k_days[tm.tm_wday], k_months[tm.tm_mon],
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
  return buffer;
}

// One mboxrd entry: "From " separator, LF line ends, ">From " quoting (one more '>' on ^>*From ), blank line.
std::string mbox_entry(const std::string& from, std::string_view message, std::time_t now) {
  std::string out = "From " + from + " " + mbox_date(now) + "\n";
  for (const auto& line : base::split(with_line_ends(message, "\n"), '\n')) {
    std::size_t quotes = line.find_first_not_of('>');
    if (quotes != std::string::npos && line.compare(quotes, 5, "From ") == 0) {
      out += '>';
    }
    out += line + "\n";
  }
  while (out.ends_with("\n\n")) {
    out.pop_back();
  }
  return out + "\n";
}

Status deliver_mbox(const std::filesystem::path& path, const std::string& from, const std::string& message) {
  std::string where = "mbox " + path.string() + ": ";
  if (path.empty()) {
    return make_error(ErrorCode::invalid_config, "mail: mbox path is empty");
  }
  auto opened = base::open_output(path, true);
  if (!opened) {
    return make_error(ErrorCode::io, "mbox " + opened.error().message); // "mbox PATH: why"
  }
  int fd = opened->get();
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      return make_error(ErrorCode::io, where + "flock: " + std::strerror(errno));
    }
  }
  off_t start = ::lseek(fd, 0, SEEK_END);
  auto written = base::write_all(fd, mbox_entry(from, message, std::time(nullptr)));
  if (!written || ::fsync(fd) != 0) {
    // Never leave half a message behind: the next reader would see a corrupt mailbox.
    std::string cause = written ? std::string(std::strerror(errno)) : written.error().message;
    if (start >= 0) {
      (void)::ftruncate(fd, start);
    }
    return make_error(ErrorCode::io, where + "write: " + cause);
  }
  return {};
}

// ---- sendmail --------------------------------------------------------------------------------------------

Status deliver_sendmail(const Transport& transport, const std::string& from, const std::vector<std::string>& recipients,
                        const std::string& message) {
  base::Command command;
  command.argv = {transport.sendmail_path, "-i", "-f", from, "--"};
  command.argv.insert(command.argv.end(), recipients.begin(), recipients.end());
  command.stdin_data = with_line_ends(message, "\n");
  command.timeout = transport.timeout;
  auto status = base::run(command);
  if (!status) {
    return std::unexpected(status.error().context("sendmail " + transport.sendmail_path));
  }
  if (status->ok()) {
    return {};
  }
  // sysexits.h: EX_UNAVAILABLE 69, EX_IOERR 74, EX_TEMPFAIL 75 are worth a retry.
  bool transient = status->timed_out || status->code == 69 || status->code == 74 || status->code == 75;
  std::string err(base::trim(status->err.size() > 300 ? status->err.substr(status->err.size() - 300) : status->err));
  for (char& c : err) {
    c = (c == '\n' || c == '\r') ? ' ' : c;
  }
  return make_error(transient ? ErrorCode::unreachable : ErrorCode::generic, "sendmail " + transport.sendmail_path +
                                                                               ": " + status->describe() +
                                                                               (err.empty() ? "" : ": " + err));
}

// ---- SMTP (libcurl) --------------------------------------------------------------------------------------

struct Upload {
  std::string data;
  std::size_t offset = 0;
};

std::size_t read_upload(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* upload = static_cast<Upload*>(user);
  std::size_t n = std::min(size * count, upload->data.size() - upload->offset);
  std::memcpy(buffer, upload->data.data() + upload->offset, n);
  upload->offset += n;
  return n;
}

ErrorCode smtp_error_code(CURLcode code, long response) {
  switch (code) {
  case CURLE_LOGIN_DENIED:
  case CURLE_USE_SSL_FAILED:
  case CURLE_UNSUPPORTED_PROTOCOL:
  case CURLE_URL_MALFORMAT: return ErrorCode::invalid_config;
  default: break;
  }
  if (response >= 500) {
    return ErrorCode::invalid_input; // the server refused this mail for good (e.g. 550 no such user)
  }
  if (response >= 400) {
    return ErrorCode::unreachable; // 421/450/451/452: try again later
  }
  switch (code) {
  case CURLE_COULDNT_CONNECT:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_WEIRD_SERVER_REPLY:
  case CURLE_PARTIAL_FILE: return ErrorCode::unreachable;
  default: return ErrorCode::generic;
  }
}

using CurlHandle = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using CurlList = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

void set_smtp_options(CURL* curl, const Transport& transport, const std::string& from, curl_slist* rcpt, Upload& upload,
                      char* error_buffer) {
  curl_easy_setopt(curl, CURLOPT_URL, transport.smtp_url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(transport.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, static_cast<long>(transport.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_MAIL_FROM, ("<" + from + ">").c_str());
  curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
#if LIBCURL_VERSION_NUM >= 0x074500
  // One rejected Cc must not keep the report from the author: deliver to every accepted recipient.
  curl_easy_setopt(curl, CURLOPT_MAIL_RCPT_ALLLOWFAILS, 1L);
#endif
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_upload);
  curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  if (transport.starttls) {
    curl_easy_setopt(curl, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  }
  if (!transport.user.empty()) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, transport.user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, transport.password.c_str());
  }
}

Status deliver_smtp(const Transport& transport, const std::string& from, const std::vector<std::string>& recipients,
                    const std::string& message) {
  static std::once_flag k_curl_init;
  std::call_once(k_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::string where = "smtp " + base::strip_url_userinfo(transport.smtp_url) + ": ";
  if (!transport.smtp_url.starts_with("smtp://") && !transport.smtp_url.starts_with("smtps://")) {
    return make_error(ErrorCode::invalid_config, where + "URL must start with smtp:// or smtps://");
  }
  CurlHandle curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) {
    return make_error(ErrorCode::infra, where + "curl_easy_init failed");
  }
  CurlList rcpt(nullptr, &curl_slist_free_all);
  for (const auto& recipient : recipients) {
    curl_slist* next = curl_slist_append(rcpt.get(), ("<" + recipient + ">").c_str());
    if (next == nullptr) {
      return make_error(ErrorCode::infra, where + "out of memory");
    }
    (void)rcpt.release();
    rcpt.reset(next);
  }
  Upload upload{with_line_ends(message, "\r\n"), 0};
  char error_buffer[CURL_ERROR_SIZE] = {};
  set_smtp_options(curl.get(), transport, from, rcpt.get(), upload, error_buffer);
  CURLcode code = curl_easy_perform(curl.get());
  if (code == CURLE_OK) {
    return {};
  }
  long response = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &response);
  std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  if (response > 0) {
    detail += " (last reply " + std::to_string(response) + ")";
  }
  return make_error(smtp_error_code(code, response), where + detail);
}

} // namespace

bool is_envelope_address(std::string_view addr) {
  static constexpr std::string_view k_forbidden = "<>()[],;:\"\\";
  if (addr.empty() || addr.size() > 254 || addr.front() == '-' || addr.find('@') == std::string_view::npos) {
    return false;
  }
  for (char c : addr) {
    auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f || k_forbidden.find(c) != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

std::string bare_address(std::string_view name_addr) {
  auto open = name_addr.rfind('<');
  auto close = open == std::string_view::npos ? open : name_addr.find('>', open);
  if (close != std::string_view::npos) {
    return std::string(base::trim(name_addr.substr(open + 1, close - open - 1)));
  }
  return std::string(base::trim(name_addr));
}

Status deliver(const Transport& transport, const std::string& from, const std::vector<std::string>& recipients,
               const std::string& message) {
  BISECTD_TRY(check_addresses(from, recipients));
  switch (transport.kind) {
  case Transport::Kind::mbox: return deliver_mbox(transport.mbox_path, from, message);
  case Transport::Kind::smtp: return deliver_smtp(transport, from, recipients, message);
  case Transport::Kind::sendmail: return deliver_sendmail(transport, from, recipients, message);
  }
  return make_error(ErrorCode::invalid_config, "mail: unknown transport");
}

} // namespace bisectd::daemon::mail
