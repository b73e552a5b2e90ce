// A report mail is dated when it is handed over, not when its bisection ended (issue #30 item 6): the outbox sets
// the Date header of the attempt that delivers; the stored message, Message-ID included, stays as it was.
#include "daemon/mail/outbox.hpp"
#include "mail_test_support.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace bisectd;
using bisectd::testing::slurp;
using bisectd::testing::temp_dir;

namespace {

constexpr std::int64_t k_created = 1'764'454'020; // Sat, 29 Nov 2025 22:07:00: the bisection's end
const std::string k_stored = "From: bisectd <bisectd@localhost>\r\n"
                             "To: Jane <jane@example.org>\r\n"
                             "Subject: [demo:master] c0ffee0000: ops -15.0% regression\r\n"
                             "Date: Sat, 29 Nov 2025 22:07:00 +0000\r\n"
                             "Message-ID: <202511292207.5.0123abcd-bisectd@localhost>\r\n"
                             "MIME-Version: 1.0\r\n"
                             "\r\n"
                             "Date: in the body is no header\r\n";

// One report in an outbox, as the store keeps it (only what the outbox asks of it).
class OneMailStore final : public storage::OutboxStore {
public:
  OneMailStore() {
    m_outbox.id = 1;
    m_outbox.report_id = 1;
    m_report.id = 1;
    m_report.bisection_id = 5;
    m_report.sender = "bisectd <bisectd@localhost>";
    m_report.to = {"Jane <jane@example.org>"};
    m_report.message_id = "<202511292207.5.0123abcd-bisectd@localhost>";
    m_report.text = k_stored;
    m_report.created_at = k_created;
  }
  Result<std::vector<std::pair<storage::OutboxRow, storage::ReportRow>>> due_mail(std::int64_t now) override {
    if (m_outbox.state != storage::OutboxState::pending || m_outbox.next_attempt_at > now) {
      return std::vector<std::pair<storage::OutboxRow, storage::ReportRow>>{};
    }
    return std::vector{std::pair{m_outbox, m_report}};
  }
  Result<bool> mark_mail_sending(std::int64_t) override {
    bool pending = m_outbox.state == storage::OutboxState::pending;
    m_outbox.state = storage::OutboxState::sending;
    return pending;
  }
  Result<std::optional<storage::OutboxRow>> report_mail(std::int64_t report_id) override {
    return report_id == m_report.id ? std::optional(m_outbox) : std::nullopt;
  }
  Result<std::vector<std::pair<storage::OutboxRow, storage::ReportRow>>> interrupted_mail() override {
    return std::vector<std::pair<storage::OutboxRow, storage::ReportRow>>{};
  }
  Status mark_mail_sent(std::int64_t) override {
    m_outbox.state = storage::OutboxState::sent;
    return {};
  }
  Status mark_mail_failed(std::int64_t, const std::string& error, std::int64_t next_attempt_at,
                          bool give_up) override {
    m_outbox.state = give_up ? storage::OutboxState::failed : storage::OutboxState::pending;
    m_outbox.attempts += 1;
    m_outbox.next_attempt_at = next_attempt_at;
    m_outbox.last_error = error;
    return {};
  }
  void set_text(std::string text) { m_report.text = std::move(text); }
  [[nodiscard]] const storage::OutboxRow& outbox() const { return m_outbox; }
  [[nodiscard]] const storage::ReportRow& report() const { return m_report; }

private:
  storage::OutboxRow m_outbox;
  storage::ReportRow m_report;
};

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

} // namespace

TEST_CASE("mail::with_date replaces the Date header only", "[mail][date]") {
  auto dated = daemon::mail::with_date(k_stored, "Mon, 07 Dec 2026 15:30:00 +0000");
  CHECK(dated.find("\r\nDate: Mon, 07 Dec 2026 15:30:00 +0000\r\nMessage-ID: <202511292207.5.0123abcd-bisectd@localhost>"
                   "\r\n") != std::string::npos);
  CHECK(dated.find("Sat, 29 Nov 2025") == std::string::npos);
  CHECK(dated.ends_with("\r\n\r\nDate: in the body is no header\r\n")); // the body is not a header
  CHECK(dated.size() == k_stored.size());                               // same length of date: nothing else moved

  // A folded Date goes whole; LF-only text keeps LF; a message without a Date gets one in its header.
  CHECK(daemon::mail::with_date("Subject: x\nDate: Sat,\n 29 Nov 2025\nTo: a@b\n\nbody\n", "D") ==
        "Subject: x\nDate: D\nTo: a@b\n\nbody\n");
  CHECK(daemon::mail::with_date("Subject: x\r\n\r\nbody\r\n", "D") == "Date: D\r\nSubject: x\r\n\r\nbody\r\n");
}

TEST_CASE("outbox: the Date is the delivering attempt's, the Message-ID the stored one", "[mail][date]") {
  auto dir = temp_dir("outbox-date");
  OneMailStore store;
  std::int64_t first_try = k_created + 4 * 3600; // a kernel bisection's mail goes out hours after it started
  // The first attempt meets an SMTP server that is not there: a retry, nothing delivered.
  daemon::mail::Transport down;
  down.kind = daemon::mail::Transport::Kind::smtp;
  down.smtp_url = "smtp://127.0.0.1:" + std::to_string(bisectd::testing::unused_port());
  down.connect_timeout = std::chrono::seconds(5);
  down.timeout = std::chrono::seconds(10);
  daemon::mail::Outbox failing(store, down, [&] { return first_try; });
  CHECK(failing.deliver_due(first_try) == 0);
  REQUIRE(store.outbox().state == storage::OutboxState::pending);
  REQUIRE(store.outbox().attempts == 1);

  // The retry delivers (to an mbox): dated by that attempt.
  std::int64_t retry = store.outbox().next_attempt_at + 7;
  daemon::mail::Transport mbox;
  mbox.mbox_path = dir / "mail.mbox";
  daemon::mail::Outbox delivering(store, mbox, [&] { return retry; });
  CHECK(delivering.deliver_due(retry) == 1);
  CHECK(store.outbox().state == storage::OutboxState::sent);
  auto mail = slurp(mbox.mbox_path);
  INFO(mail);
  CHECK(count(mail.substr(0, mail.find("\n\n")), "\nDate: ") == 1); // in the header: once
  CHECK(mail.find("\nDate: " + base::rfc5322_date(retry) + "\n") != std::string::npos);
  CHECK(mail.find("Sat, 29 Nov 2025 22:07:00") == std::string::npos);
  CHECK(mail.find("\nMessage-ID: <202511292207.5.0123abcd-bisectd@localhost>\n") != std::string::npos);
  CHECK(store.report().text == k_stored); // what the store keeps is not rewritten

  // Delivered once: a later round sends nothing.
  CHECK(delivering.deliver_due(retry + 86400) == 0);
  CHECK(count(slurp(mbox.mbox_path), "\nMessage-ID: ") == 1);
}

TEST_CASE("outbox: the golden report as sent differs from the stored one by its Date line only", "[mail][date]") {
  std::string golden = slurp(std::string(BISECTD_SOURCE_DIR) + "/tests/golden/report/regression.eml");
  REQUIRE(golden.find("\nDate: Sat, 29 Nov 2025 22:07:00 +0000\n") != std::string::npos);
  std::string stored;
  for (char c : golden) {
    stored += c == '\n' ? std::string("\r\n") : std::string(1, c);
  }
  auto dir = temp_dir("outbox-golden");
  OneMailStore store;
  std::int64_t sent_at = 1'764'480'000; // Sun, 30 Nov 2025 05:20:00: seven hours after the bisection's start
  daemon::mail::Transport mbox;
  mbox.mbox_path = dir / "mail.mbox";
  store.set_text(stored);
  daemon::mail::Outbox outbox(store, mbox, [&] { return sent_at; });
  REQUIRE(outbox.deliver_due(sent_at) == 1);
  std::string mail = slurp(mbox.mbox_path);
  std::string expected = golden;
  expected.replace(expected.find("Date: Sat, 29 Nov 2025 22:07:00 +0000"), 37, "Date: Sun, 30 Nov 2025 05:20:00 +0000");
  REQUIRE(mail.starts_with("From bisectd@localhost "));
  std::string entry = mail.substr(mail.find('\n') + 1);
  CHECK(entry == expected + "\n"); // mboxrd ends an entry with a blank line
}
