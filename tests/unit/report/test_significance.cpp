// The significance rule of the comparison table's secondary rows, their order and cap, and hostile metric names.

#include "fixtures.hpp"
#include "mail_check.hpp"
#include "report/comparison.hpp"
#include "report/recipients.hpp"
#include "report/significance.hpp"
#include "report/text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>

using namespace bisectd::report;

namespace {

bool significant(const std::string& name, std::vector<double> parent, std::vector<double> culprit) {
  return significant_change({name, std::move(parent), std::move(culprit)}, "bench.ops_per_sec");
}

std::vector<std::string> names_of(const TableRows& table) {
  std::vector<std::string> out;
  for (const auto& row : table.rows) {
    out.push_back(row.name);
  }
  return out;
}

// A clearly significant change of `percent` percent, six runs a side.
MetricComparison moved(const std::string& name, double level, double percent) {
  double to = level * (1 + percent / 100);
  return {name, {level, level * 1.001, level * 0.999, level, level * 1.002, level * 0.998},
          {to, to * 1.001, to * 0.999, to, to * 1.002, to * 0.998}};
}

// Every line of the table block of a rendered body (from the "%stddev" header to the first blank line).
std::vector<std::string> table_lines(const std::string& crlf_body) {
  std::string body;
  std::remove_copy(crlf_body.begin(), crlf_body.end(), std::back_inserter(body), '\r');
  std::vector<std::string> out;
  auto start = body.find("%stddev");
  auto end = body.find("\n\n", start);
  REQUIRE(end != std::string::npos);
  for (std::size_t at = start; at < end;) {
    auto next = body.find('\n', at);
    out.push_back(body.substr(at, next - at));
    at = next + 1;
  }
  return out;
}

} // namespace

TEST_CASE("significance: a metric absent or too thin on a side is never a row", "[report][significance]") {
  CHECK_FALSE(significant("bench.x", {}, {90, 91, 92}));
  CHECK_FALSE(significant("bench.x", {100}, {90, 91, 92}));          // one run: no variance
  CHECK_FALSE(significant("bench.x", {100, 101}, {90, 91}));         // LKP: 3 runs on one side at least
  CHECK(significant("bench.x", {100, 101}, {90, 91, 92}));
  CHECK(significant("bench.x", {100, 101, 102}, {90, 91, 92}));
}

TEST_CASE("significance: zero-variance sides", "[report][significance]") {
  CHECK(significant("bench.x", {7, 7, 7}, {9, 9, 9}));        // two constants that differ
  CHECK_FALSE(significant("bench.x", {7, 7, 7}, {7, 7, 7}));  // the same constant
  CHECK(significant("bench.x", {0, 0, 0}, {5, 5, 5}));        // from zero: a counter that appears
  CHECK(significant("bench.x", {7, 7, 7}, {9, 9.1, 8.9}));    // one side constant
}

TEST_CASE("significance: beyond noise means separated and beyond three standard errors", "[report][significance]") {
  CHECK_FALSE(significant("bench.x", {100, 101, 102}, {99, 100.5, 103})); // overlapping
  // Separated by LKP's rule (culprit's min above the parent's median, its median above the parent's max), but one
  // wild run makes the difference less than three standard errors.
  CHECK_FALSE(significant("bench.x", {10, 11, 12}, {12.1, 30, 31}));
  CHECK(significant("bench.x", {10, 11, 12}, {29.1, 30, 31}));
}

TEST_CASE("significance: large enough for its family", "[report][significance]") {
  // +3%: enough for the benchmark's own metrics, time.* and unknown families, not for a monitor or perf-stat.
  std::vector<double> base{1000, 1001, 1002}, up3{1030, 1031, 1032};
  CHECK(significant("bench.latency", base, up3));
  CHECK(significant("time.user_time", base, up3));
  CHECK(significant("cpuidle.C1.usage", base, up3));
  CHECK_FALSE(significant("proc-vmstat.pgfault", base, up3));
  CHECK_FALSE(significant("vmstat.system.cs", base, up3));
  CHECK_FALSE(significant("perf-stat.i.cycles", base, up3));
  CHECK(significant("perf-stat.i.cycles", base, {1100, 1101, 1102}));
  // +0.5%: not even for the benchmark.
  CHECK_FALSE(significant("bench.latency", base, {1005, 1006, 1007}));
  // Percentages: one point at least.
  CHECK_FALSE(significant("vmstat.cpu.sy", {10, 10, 10}, {10.5, 10.5, 10.5}));
  CHECK(significant("vmstat.cpu.sy", {10, 10, 10}, {12, 12, 12}));
  CHECK_FALSE(significant("mpstat.cpu.all.sys%", {10, 10, 10}, {10.5, 10.5, 10.5}));
  // perf-profile: 1% of samples on one side (LKP's floor); counters: 100 events on one side.
  CHECK_FALSE(significant("perf-profile.self.cycles-pp.memcpy", {0.2, 0.2, 0.2}, {0.6, 0.6, 0.6}));
  CHECK(significant("perf-profile.self.cycles-pp.memcpy", {0, 0, 0}, {2.4, 2.5, 2.3}));
  CHECK_FALSE(significant("proc-vmstat.pgmajfault", {3, 3, 3}, {12, 12, 12}));
  CHECK(significant("proc-vmstat.pgmajfault", {300, 300, 300}, {1200, 1200, 1200}));
  CHECK_FALSE(significant("interrupts.LOC", {30, 31, 32}, {60, 61, 62}));
}

TEST_CASE("row groups follow LKP's order", "[report][significance]") {
  std::string_view primary = "vm-scalability.throughput";
  CHECK(row_group("vm-scalability.time.system_time", primary) == RowGroup::benchmark);
  CHECK(row_group("loose_metric", primary) == RowGroup::benchmark);
  CHECK(row_group("time.elapsed_time", primary) == RowGroup::time);
  CHECK(row_group("vmstat.cpu.us", primary) == RowGroup::vmstat);
  CHECK(row_group("mpstat.cpu.all.sys%", primary) == RowGroup::vmstat);
  CHECK(row_group("proc-vmstat.pgfault", primary) == RowGroup::proc_vmstat);
  CHECK(row_group("meminfo.Active", primary) == RowGroup::meminfo);
  CHECK(row_group("interrupts.LOC", primary) == RowGroup::interrupts);
  CHECK(row_group("softirqs.TIMER", primary) == RowGroup::softirqs);
  CHECK(row_group("cpuidle.C1.usage", primary) == RowGroup::other);
  CHECK(row_group("perf-stat.i.ipc", primary) == RowGroup::perf_stat);
  CHECK(row_group("perf-profile.calltrace.cycles-pp.a.b", primary) == RowGroup::perf_profile_calltrace);
  CHECK(row_group("perf-profile.children.cycles-pp.a", primary) == RowGroup::perf_profile_children);
  CHECK(row_group("perf-profile.self.cycles-pp.a", primary) == RowGroup::perf_profile_self);
  CHECK(row_group("time.elapsed_time", "time.elapsed_time") == RowGroup::benchmark); // the primary's own family
}

TEST_CASE("select_rows: primary, watched, then significant rows grouped and by size", "[report][significance]") {
  std::vector<MetricComparison> metrics = {
    moved("perf-profile.self.cycles-pp.memcpy", 4, 50),   // +2.0 points
    moved("perf-profile.calltrace.cycles-pp.a.b", 20, 10), // +2.0 points
    moved("perf-stat.i.ipc", 1.2, -20),
    moved("softirqs.TIMER", 5000, 30),
    moved("interrupts.LOC", 1e5, 40),
    moved("meminfo.Active", 1e6, 8),
    moved("proc-vmstat.pgfault", 1e6, 12),
    moved("proc-vmstat.pgactivate", 1e6, 115),
    moved("vmstat.system.cs", 1e5, 9),
    moved("vmstat.cpu.sy", 10, 30), // +3.0 points, sorted with the percentages of its group by the number shown
    moved("time.elapsed_time", 10, 3),
    moved("zz-tool.events", 1000, 50),
    moved("cpuidle.C1.usage", 1000, 20),
    moved("bench.latency", 100, -4),
    moved("bench.cache_misses", 1e6, 25),
    moved("bench.rss_kb", 2048, 0), // watched: shown though it did not move
    moved("bench.ops_per_sec", 1000, -10),
  };
  auto table = select_rows(metrics, "bench.ops_per_sec", {"bench.rss_kb", "bench.rss_kb", "bench.gone"}, 0);
  CHECK(names_of(table) == std::vector<std::string>{
                             "bench.ops_per_sec", "bench.rss_kb", "bench.cache_misses", "bench.latency",
                             "time.elapsed_time", "vmstat.system.cs", "vmstat.cpu.sy", "proc-vmstat.pgactivate",
                             "proc-vmstat.pgfault", "meminfo.Active", "interrupts.LOC", "softirqs.TIMER",
                             "cpuidle.C1.usage", "zz-tool.events", "perf-stat.i.ipc",
                             "perf-profile.calltrace.cycles-pp.a.b", "perf-profile.self.cycles-pp.memcpy"});
  CHECK(table.hidden == 0);

  SECTION("the cap is shared out between the groups in turns, each group's largest rows first") {
    auto capped = select_rows(metrics, "bench.ops_per_sec", {"bench.rss_kb"}, 4);
    CHECK(names_of(capped) == std::vector<std::string>{"bench.ops_per_sec", "bench.rss_kb", "bench.cache_misses",
                                                       "time.elapsed_time", "vmstat.system.cs",
                                                       "proc-vmstat.pgactivate"});
    CHECK(capped.hidden == 11);
    // 11 groups have rows: one each, then a second row for the first groups that have one.
    auto wider = select_rows(metrics, "bench.ops_per_sec", {"bench.rss_kb"}, 13);
    CHECK(names_of(wider) == std::vector<std::string>{
                               "bench.ops_per_sec", "bench.rss_kb", "bench.cache_misses", "bench.latency",
                               "time.elapsed_time", "vmstat.system.cs", "vmstat.cpu.sy", "proc-vmstat.pgactivate",
                               "meminfo.Active", "interrupts.LOC", "softirqs.TIMER", "cpuidle.C1.usage",
                               "perf-stat.i.ipc", "perf-profile.calltrace.cycles-pp.a.b",
                               "perf-profile.self.cycles-pp.memcpy"});
    CHECK(wider.hidden == 2);
    CHECK(table_notes(capped.hidden, "bisectctl report 9 --all", {}) ==
          "    ... 11 more rows: bisectctl report 9 --all\n");
    CHECK(table_notes(1, "x", {}) == "    ... 1 more row: x\n");
    CHECK(table_notes(0, "x", {}).empty());
  }
  SECTION("a primary without samples on one side is still the first row; a watched one is not shown") {
    std::vector<MetricComparison> thin = {{"bench.ops_per_sec", {}, {1, 2, 3}}, {"bench.w", {1, 2, 3}, {}}};
    CHECK(names_of(select_rows(thin, "bench.ops_per_sec", {"bench.w"}, 30)) ==
          std::vector<std::string>{"bench.ops_per_sec"});
  }
}

TEST_CASE("compare_runs gathers each metric's runs; a profile's missing symbol is 0", "[report][significance]") {
  std::vector<RunMetrics> parent = {{{"bench.x", 1}, {"perf-profile.self.cycles-pp.a", 5}},
                                    {{"bench.x", 2}, {"perf-profile.self.cycles-pp.a", 6}},
                                    {{"bench.x", 3}}}; // this run has no profile
  std::vector<RunMetrics> culprit = {{{"bench.x", 4}, {"perf-profile.self.cycles-pp.b", 2.5}, {"time.user_time", 1}},
                                     {{"bench.x", 5}, {"perf-profile.self.cycles-pp.a", 1}}};
  auto metrics = compare_runs(parent, culprit);
  REQUIRE(metrics.size() == 4);
  CHECK(metrics[0].name == "bench.x");
  CHECK(metrics[0].parent_samples == std::vector<double>{1, 2, 3});
  CHECK(metrics[0].culprit_samples == std::vector<double>{4, 5});
  CHECK(metrics[1].name == "perf-profile.self.cycles-pp.a");
  CHECK(metrics[1].parent_samples == std::vector<double>{5, 6});
  CHECK(metrics[1].culprit_samples == std::vector<double>{0, 1});
  CHECK(metrics[2].name == "perf-profile.self.cycles-pp.b");
  CHECK(metrics[2].parent_samples == std::vector<double>{0, 0});
  CHECK(metrics[2].culprit_samples == std::vector<double>{2.5, 0});
  CHECK(metrics[3].name == "time.user_time"); // one side only: missing on the other, not 0
  CHECK(metrics[3].parent_samples.empty());
  CHECK(metrics[3].culprit_samples == std::vector<double>{1});
  CHECK(unavailable_monitors({"time", "proc-vmstat", "perf-profile", "softirqs"}, metrics) ==
        std::vector<std::string>{"proc-vmstat", "softirqs"});
}

TEST_CASE("metric_label: printable ASCII, bounded length", "[report][significance]") {
  CHECK(metric_label("proc-vmstat.pgfault") == "proc-vmstat.pgfault");
  CHECK(metric_label("evil\r\nBcc: x@y") == "evil??Bcc:?x@y");
  CHECK(metric_label("sym\xff\xfe.M\xc3\xbcller") == "sym??.M?ller"); // invalid bytes and a code point: one '?' each
  std::string chain = "perf-profile.calltrace.cycles-pp." + std::string(300, 'x') + ".leaf_function";
  std::string label = metric_label(chain);
  CHECK(label.size() == k_max_metric_label);
  CHECK(label.starts_with("perf-profile.calltrace.cycles-pp.xxxxxxx"));
  CHECK(label.find("...") == 40);
  CHECK(label.ends_with("xxx.leaf_function"));
}

TEST_CASE("the monitors report: hostile names cannot break the mail, rows are within the table", "[report]") {
  ReportInput input = bisectd::report::testing::monitors_input();
  for (std::size_t cap : {k_default_row_cap, std::size_t{0}}) {
    input.row_cap = cap;
    Recipients recipients = compute_recipients(input.culprit, {}, {}, {}, false);
    std::string rendered = render_report(input, recipients).render();
    auto parsed = bisectd::report::testing::parse_rendered(rendered);
    REQUIRE(parsed.problem.empty());
    for (const auto& [name, value] : parsed.headers) {
      CHECK(name != "Bcc");
    }
    CHECK(parsed.body.find("\r\nBcc:") == std::string::npos);
    auto lines = table_lines(parsed.body);
    for (const auto& line : lines) {
      CHECK(line.size() <= 46 + k_max_metric_label + 2); // the numbers' columns, then the bounded name
      CHECK(is_ascii(line));
    }
    // From "%stddev": two header lines, the primary, 30 of the 37 significant rows and "7 more rows", the
    // unavailable monitors; or all 37 rows.
    bool capped = cap != 0;
    CHECK(lines.size() == (capped ? 2 + 1 + 30 + 1 + 1 : 2 + 1 + 37 + 1));
    CHECK((parsed.body.find("    ... 7 more rows: bisectctl report 47 --all\r\n") != std::string::npos) == capped);
    CHECK(parsed.body.find("unavailable monitors: softirqs (no metric on any run of either commit)") !=
          std::string::npos);
    CHECK(parsed.body.find("thp_fault_alloc") == std::string::npos); // one side only
    CHECK(parsed.body.find("time.elapsed_time") == std::string::npos); // within noise
    // The cap cuts proc-vmstat's long tail, not the profile's rows.
    CHECK(parsed.body.find("perf-profile.self.cycles-pp.evil??Bcc:?victim@example.org") != std::string::npos);
    CHECK((parsed.body.find("proc-vmstat.nr_slab_unreclaimable") != std::string::npos) == !capped);
  }
}

TEST_CASE("render_comparison: the two commits, the table and how to see the rest", "[report][significance]") {
  Commit a, b;
  a.sha = "0123456789abcdef0123456789abcdef01234567";
  a.subject = "bench: initial\r\nBcc: x@y";
  b.sha = "fedcba9876543210fedcba9876543210fedcba98";
  std::vector<MetricComparison> metrics = {moved("bench.ops_per_sec", 1000, -10), moved("time.user_time", 2, 50),
                                           moved("proc-vmstat.pgfault", 5000, 40), moved("bench.part_1", 10, 30)};
  auto table = select_rows(metrics, "bench.ops_per_sec", {}, 2);
  REQUIRE(table.hidden == 1);
  std::string text = render_comparison("demo\njob", a, b, table, "bisectctl compare 0123456 fedcba9 --all",
                                       {"softirqs"});
  // The job as a metric name is shown, the commits as the report names them (a hostile subject on one line).
  CHECK(text.starts_with("job: demo?job\ncommit:\n  0123456789 (\"bench: initial Bcc: x@y\")\n  fedcba9876\n\n"));
  auto header = text.find(std::string(a.sha.substr(0, 12)));
  CHECK(header != std::string::npos);
  // The primary first, then the groups in turns (bench before time), the cap's note and the silent monitor.
  auto primary = text.find("  bench.ops_per_sec\n"), part = text.find("  bench.part_1\n"),
       time = text.find("  time.user_time\n");
  CHECK(header < primary);
  CHECK(primary < part);
  CHECK(part < time);
  CHECK(text.find("proc-vmstat.pgfault") == std::string::npos);
  CHECK(text.ends_with("    ... 1 more row: bisectctl compare 0123456 fedcba9 --all\nunavailable monitors: softirqs (no "
                       "metric on any run of either commit)\n"));
  // Uncapped: every row, no pointer; no row at all says so.
  auto every = render_comparison("demo", a, b, select_rows(metrics, "bench.ops_per_sec", {}, 0), "x", {});
  CHECK(every.find("  proc-vmstat.pgfault\n") != std::string::npos);
  CHECK(every.find("more row") == std::string::npos);
  auto none = render_comparison("demo", a, b, select_rows({}, "bench.ops_per_sec", {}, 0), "x", {});
  CHECK(none.find("(no row: no metric of both commits changed beyond its noise)\n") != std::string::npos);
  CHECK(none.find("%stddev") == std::string::npos);
}
