// The rules that make a report's numbers agree: the real parent with the commit whose binary it shares, one
// shift estimate everywhere, tags only when configured, boots only where machines boot, the watch: metrics,
// and a repeat that answers the first mail.

#include "fixtures.hpp"
#include "report/change_table.hpp"
#include "report/report.hpp"
#include "support/text.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

using namespace bisectd::report;

using bisectd::testing::contains;

namespace {

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", 100 * fraction);
  return buffer;
}

// The table row of `metric` (the whole line), or "" when the table does not show it.
std::string table_row(const std::string& body, const std::string& metric) {
  std::size_t start = 0;
  while (start < body.size()) {
    auto end = body.find('\n', start);
    std::string line = body.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.ends_with("  " + metric) && line.find('%') != std::string::npos) {
      return line;
    }
    start = end == std::string::npos ? body.size() : end + 1;
  }
  return "";
}

} // namespace

TEST_CASE("report: the comparison names the real parent and the commit whose binary it shares", "[report]") {
  ReportInput input = bisectd::report::testing::shared_binary_input();
  std::string body = render_report(input, Recipients{}).body;
  CHECK(contains(body, "commit:\n  d0c5000000 (\"docs: note 6\")  (same binary as 1417000000 \"initial benchmark\")\n"
                       "  c0ffee0000 (\"hash: probe linearly\")\n"));
  CHECK(contains(body, "d0c5000000aaaabb c0ffee000011112222333344445\n")); // the table's header: the real parent
  input.same_binary_as.reset();
  body = render_report(input, Recipients{}).body;
  CHECK_FALSE(contains(body, "same binary as"));
  CHECK(contains(body, "commit:\n  d0c5000000 (\"docs: note 6\")\n  c0ffee0000"));
}

TEST_CASE("report: one shift number in the subject, the opening, the table and the confidence block", "[report]") {
  for (const auto& input :
       {bisectd::report::testing::shared_binary_input(), bisectd::report::testing::regression_input(), bisectd::report::testing::improvement_input()}) {
    Mail mail = render_report(input, Recipients{});
    ShiftEstimate shift = estimate_shift(input.metrics.front());
    REQUIRE(shift.known);
    std::string number = percent(shift.estimate);
    INFO(mail.subject << "\n" << mail.body);
    CHECK(contains(mail.subject, " " + number + " "));
    CHECK(contains(mail.body, "bisectd noticed a " + number + " "));
    CHECK(contains(table_row(mail.body, input.metric), " " + number + " "));
    CHECK(contains(mail.body, "  shift: " + number + " (95% interval " + percent(shift.low) + " .. " +
                                percent(shift.high) + ") of " + input.metric + ", culprit vs parent"));
    // No other percentage of the primary metric is called "the shift" in the body.
    CHECK(mail.body.find("shift: ") == mail.body.rfind("shift: "));
  }
}

TEST_CASE("report::estimate_shift: the table's change with an interval that widens with noise", "[report]") {
  MetricComparison tight{"m", {100, 101, 99}, {90, 91, 89}};
  MetricComparison noisy{"m", {100, 110, 90}, {90, 100, 80}};
  auto a = estimate_shift(tight);
  auto b = estimate_shift(noisy);
  REQUIRE(a.known);
  CHECK(a.estimate == Approx(-0.10));
  CHECK(a.estimate == Approx(relative_change_percent(tight) / 100));
  CHECK(a.low < a.estimate);
  CHECK(a.high > a.estimate);
  CHECK(a.high < 0); // clearly a drop
  CHECK(b.estimate == Approx(-0.10));
  CHECK(b.high - b.low > 5 * (a.high - a.low));
  CHECK(b.high > 0); // this noise cannot tell
  CHECK(a.parent_runs == 3);
  CHECK(a.culprit_runs == 3);
  CHECK_FALSE(estimate_shift(MetricComparison{"m", {}, {1, 2}}).known);
  auto single = estimate_shift(MetricComparison{"m", {100}, {90, 92, 88}}); // one parent run borrows the variance
  CHECK(single.known);
  CHECK(single.low < single.estimate);
}

TEST_CASE("report: Reported-by and Closes only as configured", "[report]") {
  ReportInput input = bisectd::report::testing::regression_input();
  input.reported_by.clear();
  input.archive_url.clear();
  std::string body = render_report(input, Recipients{}).body;
  CHECK_FALSE(contains(body, "kindly add following tags"));
  CHECK_FALSE(contains(body, "Reported-by"));
  CHECK_FALSE(contains(body, "Closes"));

  input.reported_by = "perf robot <robot@example.org>";
  body = render_report(input, Recipients{}).body;
  CHECK(contains(body, "| Reported-by: perf robot <robot@example.org>\n\n"));
  CHECK_FALSE(contains(body, "Closes"));

  input.archive_url = "https://lore.kernel.org/perf-robot"; // a slash is added
  Mail mail = render_report(input, Recipients{});
  std::string id = mail.message_id.substr(1, mail.message_id.size() - 2);
  CHECK(contains(mail.body, "| Closes: https://lore.kernel.org/perf-robot/" + id + "\n"));
  CHECK_FALSE(contains(render_report(bisectd::report::testing::shared_binary_input(), Recipients{}).body, "Reported-by"));
}

TEST_CASE("report: boots are counted only where the machines boot", "[report]") {
  ReportInput input = bisectd::report::testing::shared_binary_input();
  CHECK_FALSE(input.boots);
  std::string body = render_report(input, Recipients{}).body;
  CHECK(contains(body, "  spent: 42 runs, 5 builds\n"));
  CHECK_FALSE(contains(body, "boots"));
  input.boots = 12;
  CHECK(contains(render_report(input, Recipients{}).body, "  spent: 42 runs, 5 builds, 12 boots\n"));
}

TEST_CASE("report: the machine time spent is shown when it was counted", "[report]") {
  ReportInput input = bisectd::report::testing::shared_binary_input();
  input.boots = 12;
  input.machine_seconds = 3 * 3600 + 25 * 60 + 40.4;
  CHECK(contains(render_report(input, Recipients{}).body,
                 "  spent: 42 runs, 5 builds, 12 boots, 3h25m of machine time\n"));
  input.machine_seconds = 95.2;
  CHECK(contains(render_report(input, Recipients{}).body, "  spent: 42 runs, 5 builds, 12 boots, 1m35s of machine time\n"));
}

TEST_CASE("report: test machine, compiler and kconfig as LKP has them", "[report]") {
  ReportInput input = bisectd::report::testing::shared_binary_input();
  std::string body = render_report(input, Recipients{}).body;
  CHECK(contains(body, "test machine: 8 threads 1 socket AMD EPYC 7282 16-Core Processor with 31G memory\n"));
  CHECK(contains(body, "compiler/testcase:\n  gcc-12/demo-bench\n"));
  input.kconfig = "x86_64-tinyconfig+bench";
  CHECK(contains(render_report(input, Recipients{}).body,
                 "compiler/kconfig/testcase:\n  gcc-12/x86_64-tinyconfig+bench/demo-bench\n"));
}

TEST_CASE("report: the job's watch metrics follow the primary, shown even within noise", "[report]") {
  ReportInput input = bisectd::report::testing::shared_binary_input();
  std::string body = render_report(input, Recipients{}).body;
  auto primary = body.find("  bench.ops_per_sec\n");
  auto latency = body.find("  bench.latency_us\n");
  auto rss = body.find("  bench.rss_kb\n");
  REQUIRE(primary != std::string::npos);
  REQUIRE(latency != std::string::npos);
  REQUIRE(rss != std::string::npos); // watched, unchanged: still shown
  CHECK(primary < latency);
  CHECK(latency < rss);
  CHECK_FALSE(contains(body, "bench.user_s")); // not watched, within noise
  CHECK(contains(table_row(body, "bench.rss_kb"), "+0.0%"));
  input.watch.clear();
  body = render_report(input, Recipients{}).body;
  CHECK(contains(body, "  bench.latency_us\n")); // changed beyond noise: shown anyway
  CHECK_FALSE(contains(body, "  bench.rss_kb\n"));
}

TEST_CASE("report: a repeated culprit answers the first mail", "[report]") {
  ReportInput input = bisectd::report::testing::regression_input();
  Mail first = render_report(input, Recipients{});
  ReportInput again = input;
  again.bisection_id = 99;
  again.earlier = EarlierReport{42, first.message_id, first.subject, input.created_at};
  Mail repeat = render_report(again, Recipients{});
  CHECK(repeat.subject == "Re: " + first.subject);
  CHECK(repeat.in_reply_to == first.message_id);
  CHECK(repeat.references == first.message_id);
  CHECK(repeat.message_id != first.message_id);
  CHECK(contains(repeat.body, "This culprit was reported before for the same tree and job (bisection 42, "
                              "Sat, 29 Nov 2025 22:07:00 +0000,\nMessage-ID " +
                                first.message_id + ")."));
  // The Closes tag names the first mail: that is the one in the archive.
  std::string id = first.message_id.substr(1, first.message_id.size() - 2);
  CHECK(contains(repeat.body, "| Closes: https://lore.kernel.org/r/" + id + "\n"));
  again.earlier->subject = "Re: " + first.subject; // never "Re: Re:"
  CHECK(render_report(again, Recipients{}).subject == "Re: " + first.subject);
}
