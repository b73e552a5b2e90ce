// Bad commit metadata: each case of docs/reliability.md's "commit-" rows, from the raw commit message through the
// recipients and the rendered mail, as the daemon composes a report.
#include "fixtures.hpp"
#include "mail_check.hpp"
#include "report/recipients.hpp"
#include "support/catalogue_rows.hpp"
#include "vcs/commit_message.hpp"

#include <catch2/catch.hpp>

#include <functional>

using namespace bisectd;
using namespace bisectd::report;

namespace {

const std::vector<std::string> k_notify = {"perf-robot@lists.example.org"};

// The culprit as the daemon builds it from a raw commit message.
Commit culprit_from(const std::string& message) {
  Commit commit = report::testing::regression_input().culprit;
  auto parsed = vcs::parse_message(message);
  commit.subject = parsed.subject;
  commit.body = parsed.body;
  commit.trailers.clear();
  for (const auto& trailer : parsed.trailers) {
    commit.trailers.emplace_back(trailer.key, trailer.value);
  }
  return commit;
}

// How the mail of a report on `message` quotes the culprit's subject (its body's `commit:` line), after checking
// that the header block is well-formed and has no header the commit put there.
std::string quoted_subject(const std::string& message) {
  ReportInput input = report::testing::regression_input();
  input.culprit = culprit_from(message);
  auto rendered = render_report(input, compute_recipients(input.culprit, k_notify, {}, {}, false)).render();
  auto parsed = report::testing::parse_rendered(rendered);
  REQUIRE(parsed.problem.empty());
  for (const auto& [name, value] : parsed.headers) {
    CHECK(name != "Bcc");
    CHECK(name != "X-Injected");
  }
  auto at = parsed.body.find("commit: ");
  REQUIRE(at != std::string::npos);
  return parsed.body.substr(at, parsed.body.find("\r\n", at) - at);
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& entry : list) {
    out += (out.empty() ? "" : ", ") + entry;
  }
  return out;
}

struct MetadataCase {
  std::string id;
  std::function<std::string()> outcome; // one line: what the report does with the input
  std::string expected;                 // a part of the outcome, quoted in the catalogue's row
};

const std::vector<MetadataCase> k_cases = {
  {"commit-latin1-subject", [] { return quoted_subject("mm: caf\xe9 au lait\n\nLatin-1 bytes.\n"); },
   "mm: caf\xef\xbf\xbd au lait"},
  {"commit-header-injection",
   [] { return quoted_subject("mm: fix\rBcc: victim@evil.org\rX-Injected: 1\n\nbody\n"); },
   "mm: fix Bcc: victim@evil.org X-Injected: 1"},
  {"commit-many-trailers",
   [] {
     std::string message = "mm: one patch, many people\n\nbody\n\n";
     for (int i = 0; i < 300; ++i) {
       message += "Signed-off-by: Dev " + std::to_string(i) + " <dev" + std::to_string(i) + "@example.org>\n";
     }
     auto who = compute_recipients(culprit_from(message), k_notify, {}, {}, false);
     auto [capped, note] = cap_recipients(who, k_notify, 40);
     CHECK(capped.to == k_notify);
     CHECK(capped.cc.empty());
     return note;
   },
   "This report names 303 recipients, more than this robot mails (40): it went to the tree's notify list only."},
  {"commit-bad-trailer-address",
   [] {
     auto who = compute_recipients(culprit_from("mm: x\n\nbody\n\nSigned-off-by: Good <good@example.org>\n"
                                                "Acked-by: Broken <broken@@example>\nReviewed-by: Nobody\n"
                                                "Tested-by: <a@b.c>, <d@e.f>\n"),
                                   {}, {}, {}, false);
     CHECK(who.to.size() == 3);
     return "To: " + joined(who.to);
   },
   "To: Yosry Ahmed <yosryahmed@google.com>, Good <good@example.org>, a@b.c"},
};

} // namespace

TEST_CASE("bad commit metadata: what the report does, documented in docs/reliability.md", "[report][catalogue]") {
  auto documented = bisectd::testing::catalogue_rows("## Bad benchmark output and commit metadata", "commit-");
  for (const auto& c : k_cases) {
    INFO(c.id);
    auto outcome = c.outcome();
    CAPTURE(outcome);
    CHECK(outcome.find(c.expected) != std::string::npos);
    CHECK(outcome.find('\n') == std::string::npos);
    REQUIRE(documented.contains(c.id));
    CHECK(documented.at(c.id).find("`" + c.expected + "`") != std::string::npos);
  }
  CHECK(documented.size() == k_cases.size());
}
