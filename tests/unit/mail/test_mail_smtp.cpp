// Integration test: the libcurl SMTP transport against a real SMTP server (smtp_sink.py on python3-aiosmtpd)
// on a free loopback port. Exits 125 (ctest: skipped) when python3 with aiosmtpd is not available.
#define CATCH_CONFIG_RUNNER
#include "base/process.hpp"
#include "base/strings.hpp"
#include "daemon/mail/transport.hpp"
#include "mail_test_support.hpp"
#include "report/recipients.hpp"
#include "report/report.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>

using namespace bisectd;
using namespace std::chrono_literals;
using bisectd::testing::slurp;
using bisectd::testing::temp_dir;

namespace {

std::string g_python; // a python3 that can import aiosmtpd

const std::string k_script = std::string(BISECTD_SOURCE_DIR) + "/tests/unit/mail/smtp_sink.py";

// $BISECTD_PYTHON, Debian's /usr/bin/python3 (where apt puts aiosmtpd), then python3 from PATH.
std::string find_python_with_aiosmtpd() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("BISECTD_PYTHON")) {
    candidates.emplace_back(env);
  }
  candidates.emplace_back("/usr/bin/python3");
  if (auto found = base::find_program("python3")) {
    candidates.push_back(found->string());
  }
  for (const auto& python : candidates) {
    base::Command probe;
    probe.argv = {python, "-c", "import aiosmtpd.smtp"};
    probe.timeout = 20s;
    auto status = base::run(probe);
    if (status && status->ok()) {
      return python;
    }
  }
  return "";
}

// smtp_sink.py running in a background thread until destroyed.
class SmtpSink {
public:
  explicit SmtpSink(std::filesystem::path dir, std::vector<std::string> options = {}, int port = 0)
      : m_dir(std::move(dir)) {
    std::filesystem::remove(m_dir / "port");
    base::Command command;
    command.argv = {g_python, k_script, "--out", m_dir.string(), "--port", std::to_string(port)};
    command.argv.insert(command.argv.end(), options.begin(), options.end());
    command.cancel = &m_stop;
    command.stdout_path = m_dir / "server.log";
    command.stderr_to_stdout = true;
    command.append = true;
    m_thread = std::thread([command] { (void)base::run(command); });
    for (int i = 0; i < 300 && !std::filesystem::exists(m_dir / "port"); ++i) {
      std::this_thread::sleep_for(50ms);
    }
    m_port = std::atoi(slurp(m_dir / "port").c_str());
  }
  ~SmtpSink() {
    m_stop = true;
    m_thread.join();
  }
  SmtpSink(const SmtpSink&) = delete;
  SmtpSink& operator=(const SmtpSink&) = delete;

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] std::string url() const { return "smtp://127.0.0.1:" + std::to_string(m_port); }

  // Number of stored messages.
  [[nodiscard]] std::size_t count() const {
    std::size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(m_dir)) {
      n += entry.path().extension() == ".eml" ? 1 : 0;
    }
    return n;
  }

private:
  std::filesystem::path m_dir;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
  int m_port = 0;
};

std::string message_with_id(const std::string& id) {
  return "From: bisectd <bisectd@localhost>\r\n"
         "To: Jane Doe <jane@example.org>\r\n"
         "Cc: linux-mm@kvack.org\r\n"
         "Subject: [linux-next:master] f6eccb4300: bench.ops -6.5% regression\r\n"
         "Message-ID: <" +
         id +
         "@localhost>\r\n"
         "\r\n"
         "Hello,\r\n"
         ".\r\n"
         "..two dots\r\n"
         "From the culprit\r\n"
         "bye\r\n";
}

daemon::mail::Transport smtp_transport(const SmtpSink& sink) {
  daemon::mail::Transport transport;
  transport.kind = daemon::mail::Transport::Kind::smtp;
  transport.smtp_url = sink.url();
  transport.connect_timeout = 10s;
  transport.timeout = 30s;
  return transport;
}

const std::vector<std::string> k_recipients = {"jane@example.org", "linux-mm@kvack.org", "akpm@linux-foundation.org"};

} // namespace

TEST_CASE("smtp: a mail arrives once, with every envelope recipient and its body intact", "[smtp]") {
  auto dir = temp_dir("smtp-sink-");
  SmtpSink sink(dir);
  REQUIRE(sink.port() > 0);
  auto status = daemon::mail::deliver(smtp_transport(sink), "bisectd@localhost", k_recipients, message_with_id("one"));
  INFO((status ? std::string("ok") : status.error().message));
  REQUIRE(status);
  REQUIRE(sink.count() == 1);
  CHECK(slurp(dir / "0001.env") == "bisectd@localhost\njane@example.org\nlinux-mm@kvack.org\n"
                                   "akpm@linux-foundation.org\n");
  std::string received = slurp(dir / "0001.eml");
  CHECK(received.find("Message-ID: <one@localhost>") != std::string::npos);
  // Dot-stuffing is undone by the server: the lines arrive as sent.
  CHECK(received.find("Hello,\r\n.\r\n..two dots\r\nFrom the culprit\r\nbye") != std::string::npos);
}

TEST_CASE("smtp: LF-only messages are sent with CRLF line ends", "[smtp]") {
  auto dir = temp_dir("smtp-sink-");
  SmtpSink sink(dir);
  REQUIRE(sink.port() > 0);
  REQUIRE(daemon::mail::deliver(smtp_transport(sink), "bisectd@localhost", {"jane@example.org"},
                                "Subject: lf\n\nline one\nline two\n"));
  REQUIRE(sink.count() == 1);
  CHECK(slurp(dir / "0001.eml").find("line one\r\nline two") != std::string::npos);
}

TEST_CASE("smtp: AUTH with user and password; a wrong password is a config error", "[smtp]") {
  auto dir = temp_dir("smtp-sink-");
  SmtpSink sink(dir, {"--auth", "robot:s3cret"});
  REQUIRE(sink.port() > 0);
  auto transport = smtp_transport(sink);
  transport.user = "robot";
  transport.password = "wrong";
  auto denied = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, message_with_id("auth"));
  REQUIRE_FALSE(denied);
  CHECK(denied.error().code == ErrorCode::invalid_config);
  CHECK(sink.count() == 0);
  transport.password = "s3cret";
  auto sent = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, message_with_id("auth"));
  INFO((sent ? std::string("ok") : sent.error().message));
  REQUIRE(sent);
  CHECK(sink.count() == 1);
}

TEST_CASE("smtp: a 4xx answer is unreachable; the retry delivers exactly once", "[smtp]") {
  auto dir = temp_dir("smtp-sink-");
  SmtpSink sink(dir, {"--fail-first", "1"});
  REQUIRE(sink.port() > 0);
  auto transport = smtp_transport(sink);
  auto first = daemon::mail::deliver(transport, "bisectd@localhost", k_recipients, message_with_id("retry"));
  REQUIRE_FALSE(first);
  CHECK(first.error().code == ErrorCode::unreachable);
  CHECK(first.error().message.find("421") != std::string::npos);
  CHECK(sink.count() == 0);
  REQUIRE(daemon::mail::deliver(transport, "bisectd@localhost", k_recipients, message_with_id("retry")));
  CHECK(sink.count() == 1);
}

TEST_CASE("smtp: server down is unreachable; after its restart the mail arrives once", "[smtp]") {
  auto dir = temp_dir("smtp-sink-");
  int port = 0;
  {
    SmtpSink sink(dir);
    REQUIRE(sink.port() > 0);
    port = sink.port();
  }
  daemon::mail::Transport transport;
  transport.kind = daemon::mail::Transport::Kind::smtp;
  transport.smtp_url = "smtp://127.0.0.1:" + std::to_string(port);
  transport.connect_timeout = 10s;
  auto down = daemon::mail::deliver(transport, "bisectd@localhost", k_recipients, message_with_id("restart"));
  REQUIRE_FALSE(down);
  CHECK(down.error().code == ErrorCode::unreachable);
  SmtpSink restarted(dir, {}, port);
  REQUIRE(restarted.port() == port);
  REQUIRE(daemon::mail::deliver(transport, "bisectd@localhost", k_recipients, message_with_id("restart")));
  CHECK(restarted.count() == 1);
}

TEST_CASE("smtp: a rendered report reaches exactly the people from the culprit's trailers", "[smtp]") {
  report::ReportInput input;
  input.bisection_id = 7;
  input.created_at = 1'764'454'020;
  input.tree = "demo";
  input.branch = "master";
  input.metric = "bench.ops_per_sec";
  input.from = "bisectd <bisectd@localhost>";
  input.culprit.sha = "f6eccb430010201d3c155b73035a1b2c3d4e5f60";
  input.culprit.subject = "bench: make the \"hot\" loop slower, on purpose";
  input.culprit.author = {"J\xc3\xb6rg M\xc3\xbcller", "joerg@example.org"};
  input.culprit.committer = {"Maintainer", "maint@example.org"};
  input.culprit.trailers = {{"Signed-off-by", "J\xc3\xb6rg M\xc3\xbcller <joerg@example.org>"},
                            {"Reviewed-by", "\"Doe, Jane\" <jane@example.org>"},
                            {"Cc", "ignored@example.org"},
                            {"Signed-off-by", "Maintainer <maint@example.org>"}};
  input.metrics = {{"bench.ops_per_sec", {100, 101, 99}, {80, 81, 79}}};
  auto recipients = report::compute_recipients(input.culprit, {}, {"list@example.org"}, {}, false);
  auto mail = report::render_report(input, recipients);
  std::vector<std::string> envelope;
  for (const auto* list : {&mail.to, &mail.cc}) {
    for (const auto& entry : *list) {
      envelope.push_back(daemon::mail::bare_address(entry));
    }
  }
  CHECK(envelope ==
        std::vector<std::string>{"joerg@example.org", "jane@example.org", "maint@example.org", "list@example.org"});
  auto dir = temp_dir("smtp-sink-");
  SmtpSink sink(dir);
  REQUIRE(sink.port() > 0);
  REQUIRE(daemon::mail::deliver(smtp_transport(sink), daemon::mail::bare_address(mail.from), envelope, mail.render()));
  REQUIRE(sink.count() == 1);
  CHECK(slurp(dir / "0001.env") ==
        "bisectd@localhost\njoerg@example.org\njane@example.org\nmaint@example.org\nlist@example.org\n");
  std::string received = slurp(dir / "0001.eml");
  for (std::size_t fold; (fold = received.find("\r\n ")) != std::string::npos;) {
    received.replace(fold, 3, " "); // unfold headers
  }
  CHECK(received.find("To: =?UTF-8?B?SsO2cmcgTcO8bGxlcg==?= <joerg@example.org>,") != std::string::npos);
  CHECK(received.find("Subject: [demo:master] f6eccb4300: bench.ops_per_sec -20.0% regression\r\n") !=
        std::string::npos);
  CHECK(received.find("\"Doe, Jane\" <jane@example.org>") != std::string::npos);
  CHECK(received.find("Message-ID: " + mail.message_id + "\r\n") != std::string::npos);
  CHECK(received.find("bisectd noticed a -20.0% regression of bench.ops_per_sec due to commit:") != std::string::npos);
}

int main(int argc, char** argv) {
  g_python = find_python_with_aiosmtpd();
  if (g_python.empty()) {
    std::cout << "test_mail_smtp: skipped: python3 with aiosmtpd (Debian python3-aiosmtpd) not found\n";
    return 125;
  }
  return Catch::Session().run(argc, argv);
}
