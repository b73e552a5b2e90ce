#include "base/strings.hpp"
#include "daemon/mail/transport.hpp"
#include "mail_test_support.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

using namespace bisectd;
using bisectd::testing::slurp;
using bisectd::testing::temp_dir;

namespace {

const std::string k_message = "From: bisectd <bisectd@localhost>\r\n"
                              "To: Jane <jane@example.org>\r\n"
                              "Subject: test\r\n"
                              "\r\n"
                              "first line\r\n"
                              "From me to you\r\n"
                              ">From quoted already\r\n"
                              ".\r\n"
                              "last line\r\n";

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::size_t count = 0;
  for (const auto& line : base::split(text, '\n')) {
    count += line.starts_with(prefix) ? 1 : 0;
  }
  return count;
}

// A fake sendmail that records its argv and stdin next to itself, then exits with `code`.
std::filesystem::path fake_sendmail(const std::filesystem::path& dir, int code) {
  auto path = dir / ("sendmail-" + std::to_string(code));
  std::ofstream(path) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$0.args\"\ncat > \"$0.stdin\"\n"
                      << "echo 'fake sendmail says hi' >&2\nexit " << code << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

} // namespace

TEST_CASE("daemon::bare_address", "[mail]") {
  CHECK(daemon::mail::bare_address("Jane Doe <j@x.org>") == "j@x.org");
  CHECK(daemon::mail::bare_address("\"Doe, Jane\" <j@x.org>") == "j@x.org");
  CHECK(daemon::mail::bare_address("  j@x.org ") == "j@x.org");
  CHECK(daemon::mail::bare_address("Jane <a@b> <j@x.org>") == "j@x.org");
}

TEST_CASE("daemon::deliver mbox appends mboxrd entries", "[mail]") {
  auto dir = temp_dir("mail-mbox-");
  daemon::mail::Transport transport;
  transport.mbox_path = dir / "mail.mbox";
  REQUIRE(daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message));
  REQUIRE(daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message));
  std::string mbox = slurp(transport.mbox_path);
  CHECK(mbox.starts_with("From bisectd@localhost "));
  CHECK(count_lines_starting(mbox, "From ") == 2);           // only the separators
  CHECK(count_lines_starting(mbox, ">From me to you") == 2); // quoted body line
  CHECK(count_lines_starting(mbox, ">>From quoted already") == 2);
  CHECK(mbox.find('\r') == std::string::npos); // local line ends
  CHECK(mbox.find("last line\n\nFrom bisectd@localhost ") != std::string::npos);
  CHECK(mbox.ends_with("last line\n\n"));
}

TEST_CASE("daemon::deliver mbox keeps concurrent writers apart (flock)", "[mail]") {
  auto dir = temp_dir("mail-mbox-");
  daemon::mail::Transport transport;
  transport.mbox_path = dir / "mail.mbox";
  std::string big_body(200'000, 'x');
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        std::string message =
          "Subject: " + std::to_string(t) + "-" + std::to_string(i) + "\r\n\r\nbegin\r\n" + big_body + "\r\nend\r\n";
        (void)daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, message);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::string mbox = slurp(transport.mbox_path);
  CHECK(count_lines_starting(mbox, "From ") == 20);
  // Every entry is whole: separator, subject, begin, body, end, blank.
  auto entries = base::split(mbox, '\n');
  std::size_t whole = 0;
  for (std::size_t i = 0; i + 5 < entries.size(); ++i) {
    if (entries[i].starts_with("From ") && entries[i + 1].starts_with("Subject: ") && entries[i + 3] == "begin" &&
        entries[i + 4] == big_body && entries[i + 5] == "end") {
      ++whole;
    }
  }
  CHECK(whole == 20);
}

TEST_CASE("daemon::deliver mbox waits for another holder of the file lock", "[mail]") {
  auto dir = temp_dir("mail-mbox-");
  daemon::mail::Transport transport;
  transport.mbox_path = dir / "mail.mbox";
  int fd = ::open(transport.mbox_path.c_str(), O_WRONLY | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0); // e.g. a mail reader compacting the mailbox
  std::atomic<bool> done{false};
  std::thread writer([&] {
    (void)daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK_FALSE(done.load());
  CHECK(std::filesystem::file_size(transport.mbox_path) == 0);
  ::flock(fd, LOCK_UN);
  ::close(fd);
  writer.join();
  CHECK(done.load());
  CHECK(count_lines_starting(slurp(transport.mbox_path), "From ") == 1);
}

TEST_CASE("daemon::deliver mbox errors name the file", "[mail]") {
  daemon::mail::Transport transport;
  transport.mbox_path = "/nonexistent-dir-bisectd/mail.mbox";
  auto status = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message);
  REQUIRE_FALSE(status);
  CHECK(status.error().code == ErrorCode::io);
  CHECK(status.error().message.find("/nonexistent-dir-bisectd/mail.mbox") != std::string::npos);
}

TEST_CASE("daemon::deliver rejects unsafe envelope addresses", "[mail]") {
  auto dir = temp_dir("mail-addr-");
  daemon::mail::Transport transport;
  transport.mbox_path = dir / "mail.mbox";
  for (const std::string bad :
       {"", "no-at-sign", "-oQ/tmp@x.org", "a b@x.org", "a@x.org\r\nRCPT TO:<v@e.org>", "<a@x.org>"}) {
    auto as_rcpt = daemon::mail::deliver(transport, "bisectd@localhost", {"ok@example.org", bad}, k_message);
    REQUIRE_FALSE(as_rcpt);
    CHECK(as_rcpt.error().code == ErrorCode::invalid_input);
    auto as_from = daemon::mail::deliver(transport, bad, {"ok@example.org"}, k_message);
    REQUIRE_FALSE(as_from);
    CHECK(as_from.error().code == ErrorCode::invalid_input);
  }
  auto none = daemon::mail::deliver(transport, "bisectd@localhost", {}, k_message);
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "mail: no recipients");
  CHECK_FALSE(std::filesystem::exists(transport.mbox_path));
}

TEST_CASE("daemon::deliver sendmail passes the envelope as argv and the message on stdin", "[mail]") {
  auto dir = temp_dir("mail-sendmail-");
  daemon::mail::Transport transport;
  transport.kind = daemon::mail::Transport::Kind::sendmail;
  transport.sendmail_path = fake_sendmail(dir, 0).string();
  REQUIRE(
    daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org", "list@vger.kernel.org"}, k_message));
  CHECK(slurp(transport.sendmail_path + ".args") ==
        "-i\n-f\nbisectd@localhost\n--\njane@example.org\nlist@vger.kernel.org\n");
  std::string input = slurp(transport.sendmail_path + ".stdin");
  CHECK(input.find('\r') == std::string::npos);
  CHECK(input.find("\n\nfirst line\nFrom me to you\n") != std::string::npos);

  SECTION("EX_TEMPFAIL is retried later, other failures are not") {
    transport.sendmail_path = fake_sendmail(dir, 75).string();
    auto temp = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message);
    REQUIRE_FALSE(temp);
    CHECK(temp.error().code == ErrorCode::unreachable);
    CHECK(temp.error().message.find("fake sendmail says hi") != std::string::npos);
    transport.sendmail_path = fake_sendmail(dir, 1).string();
    auto hard = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message);
    REQUIRE_FALSE(hard);
    CHECK(hard.error().code == ErrorCode::generic);
    CHECK(hard.error().message.find('\n') == std::string::npos);
  }
  SECTION("a missing sendmail is an error naming it") {
    transport.sendmail_path = (dir / "no-such-sendmail").string();
    auto missing = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("no-such-sendmail") != std::string::npos);
  }
}

TEST_CASE("daemon::deliver smtp: connection refused is unreachable (retry later)", "[mail]") {
  daemon::mail::Transport transport;
  transport.kind = daemon::mail::Transport::Kind::smtp;
  transport.smtp_url = "smtp://user:secret@127.0.0.1:" + std::to_string(testing::unused_port());
  transport.connect_timeout = std::chrono::seconds(5);
  auto status = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message);
  REQUIRE_FALSE(status);
  CHECK(status.error().code == ErrorCode::unreachable);
  CHECK(status.error().message.starts_with("smtp smtp://127.0.0.1:"));
  CHECK(status.error().message.find("secret") == std::string::npos);

  transport.smtp_url = "http://127.0.0.1:25";
  auto wrong = daemon::mail::deliver(transport, "bisectd@localhost", {"jane@example.org"}, k_message);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code == ErrorCode::invalid_config);
}
