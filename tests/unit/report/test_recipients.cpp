#include "report/mime.hpp"
#include "report/recipients.hpp"

#include <catch2/catch.hpp>

using namespace bisectd::report;

namespace {

Commit culprit() {
  Commit commit;
  commit.sha = "f6eccb430010201d3c155b73035a1b2c3d4e5f60";
  commit.author = Person{"Yosry Ahmed", "yosryahmed@google.com"};
  commit.committer = Person{"Andrew Morton", "akpm@linux-foundation.org"};
  commit.trailers = {{"Signed-off-by", "Yosry Ahmed <YosryAhmed@Google.com>"},
                     {"Acked-by", "Shakeel Butt <shakeelb@google.com>"},
                     {"reviewed-by", "\"Huang, Ying\" <ying.huang@intel.com>"},
                     {"Tested-by", "Domenico Cerasuolo <cerasuolodomenico@gmail.com>"},
                     {"Reported-by", "kernel test robot <oliver.sang@intel.com>"},
                     {"Cc", "stable@vger.kernel.org # 6.1+"},
                     {"Link", "https://lore.kernel.org/r/20231129032154.3710765-6-yosryahmed@google.com"},
                     {"Suggested-by", "Someone Else <else@example.org>"},
                     {"Signed-off-by", "broken trailer without address"},
                     {"Signed-off-by", "Andrew Morton <akpm@linux-foundation.org>"}};
  return commit;
}

} // namespace

TEST_CASE("report::compute_recipients: author and trailer people to To, the rest to Cc", "[report][recipients]") {
  auto recipients =
    compute_recipients(culprit(), {"Perf Team <perf@example.org>"}, {"linux-mm@kvack.org", "LINUX-MM@kvack.org"},
                       {"Johannes Weiner <hannes@cmpxchg.org>", "Shakeel Butt <SHAKEELB@google.com>",
                        "cgroups@vger.kernel.org (open list:CONTROL GROUP)"},
                       false);
  CHECK(recipients.to == std::vector<std::string>{
                           "Yosry Ahmed <yosryahmed@google.com>", "Shakeel Butt <shakeelb@google.com>",
                           "Huang, Ying <ying.huang@intel.com>", "Domenico Cerasuolo <cerasuolodomenico@gmail.com>",
                           "kernel test robot <oliver.sang@intel.com>", "Andrew Morton <akpm@linux-foundation.org>"});
  // The committer already is in To (Signed-off-by), and To wins over Cc; duplicates differ only in case.
  CHECK(recipients.cc == std::vector<std::string>{"linux-mm@kvack.org", "Johannes Weiner <hannes@cmpxchg.org>",
                                                  "cgroups@vger.kernel.org", "Perf Team <perf@example.org>"});
}

TEST_CASE("report::compute_recipients: committer goes to Cc when not a trailer person", "[report][recipients]") {
  Commit commit = culprit();
  commit.trailers = {};
  commit.committer = Person{"Linus Torvalds", "torvalds@linux-foundation.org"};
  auto recipients = compute_recipients(commit, {}, {}, {}, false);
  CHECK(recipients.to == std::vector<std::string>{"Yosry Ahmed <yosryahmed@google.com>"});
  CHECK(recipients.cc == std::vector<std::string>{"Linus Torvalds <torvalds@linux-foundation.org>"});
}

TEST_CASE("report::compute_recipients: a private tree mails only its notify list", "[report][recipients]") {
  auto recipients = compute_recipients(culprit(), {"Perf Team <perf@example.org>", "perf@EXAMPLE.org", "oops"},
                                       {"linux-mm@kvack.org"}, {"Johannes Weiner <hannes@cmpxchg.org>"}, true);
  CHECK(recipients.to == std::vector<std::string>{"Perf Team <perf@example.org>"});
  CHECK(recipients.cc.empty());
}

TEST_CASE("report::compute_recipients: hostile names stay one line, bad addresses are dropped",
          "[report][recipients]") {
  Commit commit = culprit();
  commit.author = Person{"Evil\r\nBcc: victim@evil.org", "evil@example.org"};
  commit.committer = Person{"Nobody", "not-an-address"};
  commit.trailers = {{"Signed-off-by", "X <x@example.org>\nBcc: victim@evil.org"}};
  auto recipients = compute_recipients(commit, {}, {}, {}, false);
  CHECK(recipients.to == std::vector<std::string>{"Evil Bcc: victim@evil.org <evil@example.org>", "X <x@example.org>"});
  CHECK(recipients.cc.empty());
}

TEST_CASE("report::is_recipient_trailer", "[report][recipients]") {
  CHECK(is_recipient_trailer("Signed-off-by"));
  CHECK(is_recipient_trailer("reported-BY"));
  CHECK_FALSE(is_recipient_trailer("Cc"));
  CHECK_FALSE(is_recipient_trailer("Suggested-by"));
  CHECK_FALSE(is_recipient_trailer("Link"));
}

// Found by tests/fuzz/recipients: "Tested-by: <#x@y.z>" gave the recipient "#x@y.z", which reads back as an empty
// address and a "# comment", so the mail's headers dropped someone the envelope still named.
TEST_CASE("report::compute_recipients: an address with '#' reads back as itself", "[report][recipients]") {
  Commit commit;
  commit.author = Person{"", "####@y.z"};
  commit.trailers = {{"Tested-by", "<x#1@example.org>"}};
  auto recipients = compute_recipients(commit, {}, {"<list#x@example.org>"}, {}, false);
  REQUIRE(recipients.to.size() == 2);
  REQUIRE(recipients.cc.size() == 1);
  for (const auto* list : {&recipients.to, &recipients.cc}) {
    for (const auto& entry : *list) {
      auto address = parse_address(entry);
      REQUIRE(address.has_value());
      CHECK(format_address(*address) == entry);
    }
  }
  CHECK(parse_address(recipients.to[0])->addr == "####@y.z");
  CHECK(parse_address(recipients.to[1])->addr == "x#1@example.org");
  CHECK(parse_address(recipients.cc[0])->addr == "list#x@example.org");
}
