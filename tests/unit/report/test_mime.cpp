#include "mail_check.hpp"
#include "report/mail.hpp"
#include "report/mime.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace bisectd::report;
using bisectd::report::testing::decode_words;
using bisectd::report::testing::header_values;
using bisectd::report::testing::parse_rendered;

namespace {

Mail plain_mail() {
  Mail mail;
  mail.from = "bisectd <bisectd@localhost>";
  mail.to = {"Jane Doe <jane@example.org>"};
  mail.subject = "hello";
  mail.message_id = "<1.2-bisectd@localhost>";
  mail.date = rfc5322_date(0);
  mail.body = "line one\nline two\n";
  return mail;
}

std::set<std::string> header_names(const bisectd::report::testing::ParsedMail& parsed) {
  std::set<std::string> names;
  for (const auto& [name, value] : parsed.headers) {
    names.insert(name);
  }
  return names;
}

const std::set<std::string> k_base_headers = {
  "From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type", "Content-Transfer-Encoding"};

} // namespace

TEST_CASE("report::is_valid_addr_spec", "[report][mime]") {
  CHECK(is_valid_addr_spec("jane@example.org"));
  CHECK(is_valid_addr_spec("jane.doe+lkml@mail.example.org"));
  CHECK_FALSE(is_valid_addr_spec("jane"));
  CHECK_FALSE(is_valid_addr_spec("ja ne@example.org"));
  CHECK_FALSE(is_valid_addr_spec("jane@exa\r\nmple.org"));
  CHECK_FALSE(is_valid_addr_spec("jane@example.org>"));
  CHECK_FALSE(is_valid_addr_spec("j\xc3\xa4@example.org"));
  CHECK_FALSE(is_valid_addr_spec(".jane@example.org"));
}

TEST_CASE("report::parse_address accepts trailer and get_maintainer forms", "[report][mime]") {
  auto a = parse_address("Jane Doe <jane@example.org>");
  REQUIRE(a);
  CHECK(a->name == "Jane Doe");
  CHECK(a->addr == "jane@example.org");
  auto b = parse_address("\"Doe, Jane\" <jane@example.org>");
  REQUIRE(b);
  CHECK(b->name == "Doe, Jane");
  auto c = parse_address("stable@vger.kernel.org # 6.1+");
  REQUIRE(c);
  CHECK(c->addr == "stable@vger.kernel.org");
  CHECK(c->name.empty());
  auto d = parse_address("linux-mm@kvack.org (open list:MEMORY MANAGEMENT)");
  REQUIRE(d);
  CHECK(d->addr == "linux-mm@kvack.org");
  CHECK_FALSE(parse_address("Jane Doe <not an address>"));
  CHECK_FALSE(parse_address("nobody"));
  auto e = parse_address("Evil\r\nBcc: victim@evil.org <evil@example.org>\r\nBcc: x@y.org");
  REQUIRE(e);
  CHECK(e->addr == "evil@example.org");
  CHECK(e->name == "Evil Bcc: victim@evil.org");
}

TEST_CASE("report::Mail::render is well-formed CRLF with the expected headers", "[report][mime]") {
  Mail mail = plain_mail();
  std::string text = mail.render();
  auto parsed = parse_rendered(text);
  REQUIRE(parsed.problem.empty());
  CHECK(header_names(parsed) == k_base_headers);
  CHECK(parsed.body == "line one\r\nline two\r\n");
  CHECK(header_values(parsed, "Content-Transfer-Encoding").at(0) == " 7bit");
  CHECK(header_values(parsed, "Date").at(0) == " Thu, 01 Jan 1970 00:00:00 +0000");
}

TEST_CASE("report: hostile subjects cannot add header lines", "[report][mime]") {
  Mail mail = plain_mail();
  mail.subject =
    GENERATE(std::string("fix\r\nBcc: victim@evil.org"), std::string("fix\nBcc: victim@evil.org\n\nbody"),
             std::string("fix\rBcc: victim@evil.org"), std::string("=?UTF-8?B?Zm9v?= \"quoted\", comma"),
             std::string("mm: fix M\xc3\xbcller\xe2\x80\x99s bug\r\nBcc: victim@evil.org \xf0\x9f\x98\x80"),
             std::string(300, 'x') + " tail", std::string("bad utf8 \xff\xfe here"));
  auto parsed = parse_rendered(mail.render());
  INFO(mail.subject);
  REQUIRE(parsed.problem.empty());
  CHECK(header_names(parsed) == k_base_headers);
  auto subject = header_values(parsed, "Subject");
  REQUIRE(subject.size() == 1);
  std::string decoded = decode_words(subject[0]);
  CHECK(decoded.find('\r') == std::string::npos);
  CHECK(decoded.find('\n') == std::string::npos);
  if (mail.subject.starts_with("fix")) {
    CHECK(decoded == "fix Bcc: victim@evil.org" + std::string(mail.subject.ends_with("body") ? " body" : ""));
  }
  if (mail.subject.starts_with("mm:")) {
    CHECK(decoded == "mm: fix M\xc3\xbcller\xe2\x80\x99s bug Bcc: victim@evil.org \xf0\x9f\x98\x80");
  }
  if (mail.subject.starts_with("bad")) {
    CHECK(decoded == "bad utf8 \xef\xbf\xbd\xef\xbf\xbd here");
  }
}

TEST_CASE("report: long non-ASCII subjects become folded encoded words", "[report][mime]") {
  Mail mail = plain_mail();
  std::string subject;
  for (int i = 0; i < 20; ++i) {
    subject += "\xc3\xa9t\xc3\xa9 \xe2\x82\xac ";
  }
  mail.subject = subject;
  std::string text = mail.render();
  auto parsed = parse_rendered(text);
  REQUIRE(parsed.problem.empty());
  CHECK(decode_words(header_values(parsed, "Subject").at(0)) == subject.substr(0, subject.size() - 1));
  std::size_t header_end = text.find("\r\n\r\n");
  std::size_t start = 0;
  while (start < header_end) {
    std::size_t end = text.find("\r\n", start);
    CHECK(end - start <= 78);
    start = end + 2;
  }
}

TEST_CASE("report: display names with commas, quotes and non-ASCII are encoded", "[report][mime]") {
  Mail mail = plain_mail();
  mail.to = {"\"Doe, Jane\" <jane@example.org>",
             "Jane \"JD\" Doe <jd@example.org>",
             "J\xc3\xb6rg M\xc3\xbcller <joerg@example.org>",
             "Evil <evil@example.org>\r\nBcc: victim@evil.org",
             "not an address",
             "Bcc: victim@evil.org"};
  mail.cc = {"Mallory <m@example.org>, Bcc <victim@evil.org>"};
  auto parsed = parse_rendered(mail.render());
  REQUIRE(parsed.problem.empty());
  CHECK(header_names(parsed) == std::set<std::string>{"From", "To", "Cc", "Subject", "Date", "Message-ID",
                                                      "MIME-Version", "Content-Type", "Content-Transfer-Encoding"});
  std::string to = header_values(parsed, "To").at(0);
  CHECK(to.find("\"Doe, Jane\" <jane@example.org>,") != std::string::npos);
  CHECK(to.find("\"Jane \\\"JD\\\" Doe\" <jd@example.org>,") != std::string::npos);
  CHECK(to.find("=?UTF-8?B?") != std::string::npos);
  CHECK(decode_words(to).find("J\xc3\xb6rg M\xc3\xbcller <joerg@example.org>") != std::string::npos);
  CHECK(to.find("victim") == std::string::npos);
  CHECK(to.ends_with("<evil@example.org>"));
  // One list entry is one address: the comma inside it cannot smuggle in a second one.
  std::string cc = header_values(parsed, "Cc").at(0);
  CHECK(cc.find("victim") == std::string::npos);
  CHECK(mail.envelope_recipients() == std::vector<std::string>{"jane@example.org", "jd@example.org",
                                                               "joerg@example.org", "evil@example.org",
                                                               "m@example.org"});
}

TEST_CASE("report: threading headers accept only valid message ids", "[report][mime]") {
  CHECK(normalize_message_id("<20231122.abc@intel.com>") == "<20231122.abc@intel.com>");
  CHECK(normalize_message_id("20231122.abc@intel.com") == "<20231122.abc@intel.com>");
  CHECK(normalize_message_id("https://lore.kernel.org/r/20231122.abc@intel.com/") == "<20231122.abc@intel.com>");
  CHECK(normalize_message_id("https://lore.kernel.org/all/20231122.abc%40intel.com") == "<20231122.abc@intel.com>");
  CHECK(normalize_message_id("<a@b>\r\nBcc: victim@evil.org").empty());
  CHECK(normalize_message_id("no id here").empty());
  Mail mail = plain_mail();
  mail.in_reply_to = "<a@b.org>\r\nBcc: victim@evil.org";
  mail.references = "<a@b.org> <c@d.org>";
  auto parsed = parse_rendered(mail.render());
  REQUIRE(parsed.problem.empty());
  // Only the valid message id survives; the rest of the line is dropped, never a new header.
  CHECK(header_values(parsed, "In-Reply-To").at(0) == " <a@b.org>");
  CHECK(header_values(parsed, "Bcc").empty());
  CHECK(header_values(parsed, "References").at(0) == " <a@b.org> <c@d.org>");
}

TEST_CASE("report: body is 8bit UTF-8, or quoted-printable when a line is too long", "[report][mime]") {
  Mail mail = plain_mail();
  mail.body = "avg \xc2\xb1 2%\rbare CR\n.\nFrom here\n";
  auto parsed = parse_rendered(mail.render());
  REQUIRE(parsed.problem.empty());
  CHECK(header_values(parsed, "Content-Transfer-Encoding").at(0) == " 8bit");
  CHECK(header_values(parsed, "Content-Type").at(0) == " text/plain; charset=utf-8");
  CHECK(parsed.body == "avg \xc2\xb1 2%bare CR\r\n.\r\nFrom here\r\n");

  mail.body = std::string(1200, 'a') + " = end \n";
  parsed = parse_rendered(mail.render());
  REQUIRE(parsed.problem.empty());
  CHECK(header_values(parsed, "Content-Transfer-Encoding").at(0) == " quoted-printable");
  std::string decoded;
  for (std::size_t i = 0; i < parsed.body.size(); ++i) {
    if (parsed.body.compare(i, 3, "=\r\n") == 0) {
      i += 2;
    } else if (parsed.body[i] == '=') {
      decoded += static_cast<char>(std::stoi(parsed.body.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      decoded += parsed.body[i];
    }
  }
  CHECK(decoded == std::string(1200, 'a') + " = end \r\n");
  std::size_t start = 0;
  while (start < parsed.body.size()) {
    std::size_t end = parsed.body.find("\r\n", start);
    REQUIRE(end != std::string::npos);
    CHECK(end - start <= 76);
    start = end + 2;
  }
  CHECK(start > 1200); // the long line really was split into several
}

TEST_CASE("report: an invalid From falls back to the robot's default address", "[report][mime]") {
  Mail mail = plain_mail();
  mail.from = "robot\r\nBcc: victim@evil.org";
  auto parsed = parse_rendered(mail.render());
  REQUIRE(parsed.problem.empty());
  CHECK(header_values(parsed, "From").at(0) == " bisectd@localhost");
  CHECK(header_values(parsed, "Bcc").empty());
}

TEST_CASE("report::rfc5322_date", "[report][mime]") {
  CHECK(rfc5322_date(0) == "Thu, 01 Jan 1970 00:00:00 +0000");
  CHECK(rfc5322_date(1'764'454'020) == "Sat, 29 Nov 2025 22:07:00 +0000");
  CHECK(rfc5322_date(951'782'400) == "Tue, 29 Feb 2000 00:00:00 +0000");
}
