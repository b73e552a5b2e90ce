// Issue #30 item 6: the details a sceptical maintainer looks for in a report (probabilities never rounded up to
// certainty, the culprit's diffstat, the commits the bisection skipped and why, a reproduce section without
// bisectd and the job file attached).

#include "base/strings.hpp"
#include "fixtures.hpp"
#include "mail_check.hpp"
#include "report/report.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bisectd::report;

TEST_CASE("base::probability_percent never rounds up to 100%", "[report][details]") {
  using bisectd::base::probability_percent;
  CHECK(probability_percent(0.9962) == "99.6%");
  CHECK(probability_percent(0.999) == "99.9%");
  CHECK(probability_percent(0.99949) == "> 99.9%"); // %.1f would print 99.9% too, but it is above 99.9%
  CHECK(probability_percent(0.9996) == "> 99.9%");  // %.1f: "100.0%"
  CHECK(probability_percent(1.0) == "> 99.9%");
  CHECK(probability_percent(0.62) == "62.0%");
  CHECK(probability_percent(0) == "0.0%");
  CHECK(probability_percent(std::nan("")) == "n/a");
}

TEST_CASE("report: P(culprit) above 99.9% reads \"> 99.9%\" in every confidence line", "[report][details]") {
  ReportInput input = bisectd::report::testing::regression_input();
  input.p_culprit = 0.99996;
  std::string body = render_report(input, Recipients{}).body;
  CHECK(body.find("  P(culprit): > 99.9%\n") != std::string::npos);
  CHECK(body.find("100.0%") == std::string::npos);

  ReportInput set = bisectd::report::testing::set_input();
  set.p_culprit = 0.9999;
  CHECK(render_report(set, Recipients{}).body.find("P(culprit is one of the 3 commits): > 99.9%\n") !=
        std::string::npos);
}

TEST_CASE("report: the culprit's diffstat, aligned, capped, only for a single culprit", "[report][details]") {
  ReportInput input = bisectd::report::testing::regression_input();
  std::string body = render_report(input, Recipients{}).body;
  CHECK(body.find("diffstat of f6eccb4300 (\"mm: memcg: restore subtree stats flushing\"):\n\n"
                  " include/linux/memcontrol.h |  8 ++++++++\n"
                  " mm/memcontrol.c            | 31 +++++++++++++++++++++++++------\n"
                  " 2 files changed, 33 insertions(+), 6 deletions(-)\n") != std::string::npos);

  // A tree-wide change: 40 file lines, the rest counted, git's summary kept; a hostile path stays in its line.
  input.diffstat = " evil\r\nBcc: victim@example.org\x1b[31m.c | 1 +\n"; // two lines in the mail, no header
  input.diffstat += " " + std::string(400, 'p') + ".c | 1 +\n";
  for (int i = 0; i < 55; ++i) {
    input.diffstat += " drivers/f" + std::to_string(i) + ".c | 2 +-\n";
  }
  input.diffstat += " 57 files changed, 57 insertions(+), 55 deletions(-)\n";
  auto mail = render_report(input, Recipients{});
  CHECK(mail.body.find(" drivers/f36.c | 2 +-\n ... 18 more files\n 57 files changed,") != std::string::npos);
  CHECK(mail.body.find("drivers/f37.c") == std::string::npos);
  CHECK(mail.body.find(" " + std::string(200, 'p') + "...\n") != std::string::npos); // cut at 200 bytes
  auto parsed = bisectd::report::testing::parse_rendered(mail.render());
  REQUIRE(parsed.problem.empty());
  CHECK(bisectd::report::testing::header_values(parsed, "Bcc").empty());
  CHECK(mail.body.find('\x1b') == std::string::npos);

  CHECK(render_report(bisectd::report::testing::set_input(), Recipients{}).body.find("diffstat of") ==
        std::string::npos);
  CHECK(render_report(bisectd::report::testing::not_confident_input(), Recipients{}).body.find("diffstat of") ==
        std::string::npos);
}

TEST_CASE("report: the skipped commits, each with why, hostile reasons on one line", "[report][details]") {
  ReportInput input = bisectd::report::testing::regression_input();
  std::string body = render_report(input, Recipients{}).body;
  CHECK(body.find("skipped: 2 commits could not be measured, the bisection searched around them:\n"
                  "  a1b2c3d4e5 (\"mm: memcg: add per-memcg flush stats\")\n"
                  "      unbuildable: mm/memcontrol.c:1234:5: error: 'flush_next_time' undeclared (first use in this "
                  "function)\n"
                  "  b2c3d4e5f6 (\"mm: workingset: ratelimit the flush\")\n"
                  "      unbootable (2 times): no login prompt") != std::string::npos);

  // A compiler's message is the tree's text: one line, cut, and no header of its own.
  input.skipped.resize(1);
  input.skipped[0].why = "unbuildable: x.c:1: error\r\nBcc: victim@example.org\n" + std::string(500, 'e');
  auto mail = render_report(input, Recipients{});
  CHECK(mail.body.find("unbuildable: x.c:1: error Bcc: victim@example.org eeee") != std::string::npos);
  CHECK(mail.body.find(std::string(300, 'e')) == std::string::npos);
  CHECK(mail.body.find("skipped: 1 commit could not") != std::string::npos);

  // Many: the first k_max_skipped_listed, then a count and where the whole list is.
  input.skipped.assign(25, input.skipped[0]);
  CHECK(render_report(input, Recipients{}).body.find("  ... 5 more (bisectctl show 42 lists them all)\n") !=
        std::string::npos);

  input.skipped.clear();
  CHECK(render_report(input, Recipients{}).body.find("skipped:") == std::string::npos);
}

TEST_CASE("report: reproduce lines without bisectd, the job file and config attached as text parts",
          "[report][details]") {
  ReportInput input = bisectd::report::testing::regression_input();
  Mail mail = render_report(input, Recipients{});
  CHECK(mail.body.find("To reproduce without bisectd (the job file vm-scalability-anon-r-seq.yaml and the files the "
                       "commands read\nare attached: save them in the directory you start in):\n\n"
                       "        git clone https://git.kernel.org/pub/scm/linux/kernel/git/next/linux-next.git "
                       "linux-next\n") != std::string::npos);
  CHECK(mail.body.find("        make O=build ARCH=x86_64 -j\"$(nproc)\" bzImage\n") != std::string::npos);
  CHECK(mail.body.find("With bisectd:\n\n        bisectctl show 42\n") != std::string::npos);
  REQUIRE(mail.attachments.size() == 2);
  CHECK(mail.attachments[0].name == "vm-scalability-anon-r-seq.yaml");
  CHECK(mail.attachments[0].text == input.job_yaml);
  CHECK(mail.attachments[1].name == "x86_64-rhel-9.4");

  std::string text = mail.render();
  auto parsed = bisectd::report::testing::parse_rendered(text);
  REQUIRE(parsed.problem.empty());
  auto type = bisectd::report::testing::header_values(parsed, "Content-Type");
  REQUIRE(type.size() == 1);
  REQUIRE(type[0].starts_with(" multipart/mixed; boundary=\"=_bisectd_"));
  std::string boundary = type[0].substr(type[0].find('"') + 1);
  boundary.pop_back();
  // Three parts (the text, the job file, the config), then the closing delimiter; each part a text/plain one.
  std::size_t delimiters = 0;
  for (auto at = text.find("\r\n--" + boundary + "\r\n"); at != std::string::npos;
       at = text.find("\r\n--" + boundary + "\r\n", at + 1)) {
    ++delimiters;
  }
  CHECK(delimiters == 3);
  CHECK(text.ends_with("\r\n--" + boundary + "--\r\n"));
  CHECK(text.find("Content-Type: text/plain; charset=us-ascii; name=\"vm-scalability-anon-r-seq.yaml\"\r\n"
                  "Content-Transfer-Encoding: 7bit\r\n"
                  "Content-Disposition: attachment; filename=\"vm-scalability-anon-r-seq.yaml\"\r\n\r\n"
                  "name: vm-scalability-anon-r-seq\r\n") != std::string::npos);
  CHECK(text == render_report(input, Recipients{}).render()); // the same bytes every time

  // Hostile names and contents: a name is a plain file name, a part cannot close the message early.
  mail.attachments = {{"../../etc/passwd\r\nBcc: victim@example.org", "x\n--" + boundary + "--\n"}, {"", "y\n"}};
  text = mail.render();
  parsed = bisectd::report::testing::parse_rendered(text);
  REQUIRE(parsed.problem.empty());
  CHECK(bisectd::report::testing::header_values(parsed, "Bcc").empty());
  CHECK(text.find("filename=\"_.._etc_passwd_Bcc__victim_example.org\"") != std::string::npos);
  CHECK(text.find("filename=\"attachment.txt\"") != std::string::npos);
  type = bisectd::report::testing::header_values(bisectd::report::testing::parse_rendered(text), "Content-Type");
  std::string other = type[0].substr(type[0].find('"') + 1);
  other.pop_back();
  CHECK(text.find("\r\n--" + other + "--\r\n") == text.size() - other.size() - 8); // only at the end

  // No attachment: the text/plain message as before.
  input.job_yaml.clear();
  input.files.clear();
  CHECK(render_report(input, Recipients{}).render().find("multipart") == std::string::npos);
}
