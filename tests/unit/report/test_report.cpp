#include "fixtures.hpp"
#include "mail_check.hpp"
#include "report/recipients.hpp"
#include "report/report.hpp"

#include <catch2/catch.hpp>

using namespace bisectd::report;

TEST_CASE("report::report_subject variants", "[report]") {
  ReportInput input = bisectd::report::testing::regression_input();
  CHECK(report_subject(input) == "[linux-next:master] f6eccb4300: vm-scalability.throughput -6.5% regression");
  input.direction = -1;
  CHECK(report_subject(input) == "[linux-next:master] f6eccb4300: vm-scalability.throughput -6.5% improvement");
  input.direction = +1;
  std::swap(input.metrics[0].parent_samples, input.metrics[0].culprit_samples);
  CHECK(report_subject(input) == "[linux-next:master] f6eccb4300: vm-scalability.throughput +6.9% improvement");

  CHECK(report_subject(bisectd::report::testing::layout_input()) ==
        "[linux-next:master] f6eccb4300: vm-scalability.throughput -6.5% regression (likely code-layout artefact)");
  CHECK(report_subject(bisectd::report::testing::set_input()) ==
        "[linux-next:master] f6eccb4300: vm-scalability.throughput -6.5% regression (one of 3 commits)");
  CHECK(report_subject(bisectd::report::testing::not_confident_input()) ==
        "[linux-next:master] no culprit with high confidence: vm-scalability.throughput -6.5% regression "
        "(4 candidates)");

  ReportInput patch = bisectd::report::testing::regression_input();
  patch.in_reply_to = "https://lore.kernel.org/r/20231129032154.3710765-6-yosryahmed@google.com";
  CHECK(report_subject(patch) == "Re: mm: memcg: restore subtree stats flushing");
  patch.metrics.clear();
  patch.in_reply_to.clear();
  CHECK(report_subject(patch) == "[linux-next:master] f6eccb4300: vm-scalability.throughput change");
}

TEST_CASE("report::render_report threads to the patch and keeps a stable Message-ID", "[report]") {
  ReportInput input = bisectd::report::testing::regression_input();
  input.in_reply_to = "https://lore.kernel.org/r/20231129032154.3710765-6-yosryahmed@google.com";
  input.from = "bisectd <robot@perf.example.org>";
  Mail mail = render_report(input, Recipients{{"Yosry Ahmed <yosryahmed@google.com>"}, {}});
  CHECK(mail.in_reply_to == "<20231129032154.3710765-6-yosryahmed@google.com>");
  CHECK(mail.references == mail.in_reply_to);
  CHECK(mail.message_id == message_id_for(42, input.created_at, "perf.example.org"));
  CHECK(mail.message_id == render_report(input, Recipients{}).message_id);
  CHECK(mail.message_id.starts_with("<202511292207.42."));
  CHECK(mail.message_id.ends_with("-bisectd@perf.example.org>"));
  CHECK(message_id_for(43, input.created_at, "x.org") != message_id_for(42, input.created_at, "x.org"));
  CHECK(message_id_for(42, input.created_at, "bad domain\r\n") == message_id_for(42, input.created_at, "localhost"));
  auto parsed = bisectd::report::testing::parse_rendered(mail.render());
  REQUIRE(parsed.problem.empty());
  CHECK(bisectd::report::testing::header_values(parsed, "In-Reply-To").at(0) == " <20231129032154.3710765-6-yosryahmed@google.com>");

  input.confident = false; // a set answer is not a reply to one patch
  CHECK(render_report(input, Recipients{}).in_reply_to.empty());
}

TEST_CASE("report::render_report body: LKP skeleton, noise filtered, tags only for confident regressions", "[report]") {
  Mail mail = render_report(bisectd::report::testing::regression_input(), Recipients{});
  const std::string& body = mail.body;
  CHECK(body.find("bisectd noticed a -6.5% regression of vm-scalability.throughput due to commit:") !=
        std::string::npos);
  CHECK(body.find("test machine: 88 threads 2 sockets") != std::string::npos);
  CHECK(body.find("\truntime: 300s\n") != std::string::npos);
  CHECK(body.find("compiler/cpufreq_governor/kconfig/runtime/test/testcase:\n"
                  "  gcc-12/performance/x86_64-rhel-9.4/300s/anon-r-seq/vm-scalability\n") != std::string::npos);
  CHECK(body.find("commit:\n  4c86da8ea2 (\"mm: workingset:") != std::string::npos);
  CHECK(body.find("vm-scalability.time.system_time") != std::string::npos);
  CHECK(body.find("vm-scalability.time.user_time") == std::string::npos); // within noise
  CHECK(body.find("| Reported-by: bisectd <bisectd@localhost>") != std::string::npos);
  CHECK(body.find("P(culprit): 99.6%") != std::string::npos);
  CHECK(body.find("        bisectctl report 42\n") != std::string::npos);
  CHECK(body.find("        name: vm-scalability-anon-r-seq\n") != std::string::npos);
  CHECK(body.find("culprit f6eccb4300") != std::string::npos);

  CHECK(render_report(bisectd::report::testing::improvement_input(), Recipients{}).body.find("Reported-by") == std::string::npos);
  CHECK(render_report(bisectd::report::testing::not_confident_input(), Recipients{}).body.find("Reported-by") == std::string::npos);
  CHECK(render_report(bisectd::report::testing::layout_input(), Recipients{})
          .body.find("WARNING: this is likely a code-layout "
                     "artefact") != std::string::npos);
}

TEST_CASE("report::render_report is deterministic and survives hostile commit data", "[report]") {
  ReportInput input = bisectd::report::testing::regression_input();
  input.culprit.subject = "mm: \"fix\", M\xc3\xbcller\r\nBcc: victim@evil.org\r\n\r\nfake body";
  input.culprit.author.name = "Evil\r\nBcc: victim@evil.org";
  input.tree = "tree\nX-Injected: 1";
  Recipients recipients = compute_recipients(input.culprit, {}, {}, {}, false);
  std::string first = render_report(input, recipients).render();
  CHECK(first == render_report(input, recipients).render());
  auto parsed = bisectd::report::testing::parse_rendered(first);
  REQUIRE(parsed.problem.empty());
  for (const auto& [name, value] : parsed.headers) {
    CHECK(name != "Bcc");
    CHECK(name != "X-Injected");
  }
  CHECK(parsed.body.find("\r\nBcc:") == std::string::npos);
  CHECK(parsed.body.find("(\"mm: \"fix\", M\xc3\xbcller Bcc: victim@evil.org fake body\")") != std::string::npos);
}

TEST_CASE("report::render_report never mails credentials from the tree URL", "[report]") {
  ReportInput input = bisectd::report::testing::regression_input();
  input.url = "https://robot:s3cret-token@git.example.org/linux.git";
  std::string body = render_report(input, Recipients{}).body;
  CHECK(body.find("s3cret") == std::string::npos);
  CHECK(body.find("url: https://git.example.org/linux.git\n") != std::string::npos);
  input.url = "git@example.org:linux.git"; // scp-like ssh URL: nothing to hide
  CHECK(render_report(input, Recipients{}).body.find("url: git@example.org:linux.git\n") != std::string::npos);
}
