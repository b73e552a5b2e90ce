// The /proc monitor parsers and the delta/rate rules, on files recorded from a host (data/host-*) and on
// hand-made hostile text.

#include "monitors/monitors.hpp"
#include "monitors/proc_text.hpp"

#include "data_file.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace bisectd::monitors;

namespace {

Snapshot recorded(const std::string& moment) {
  Snapshot s;
  for (const char* file : {"vmstat", "meminfo", "interrupts", "softirqs", "stat"}) {
    s.files[file] = data_file("host-" + moment + "." + file);
  }
  return s;
}

const std::set<std::string> all = {"proc-vmstat", "vmstat", "interrupts", "softirqs", "meminfo", "time"};

} // namespace

TEST_CASE("the recorded host files parse with LKP's names") {
  auto vmstat = parse_vmstat(data_file("host-after.vmstat"));
  CHECK(vmstat.at("pgfault") == 545467361);
  CHECK(vmstat.size() > 100);
  auto meminfo = parse_meminfo(data_file("host-after.meminfo"));
  CHECK(meminfo.at("MemTotal") == 24683584);
  CHECK(meminfo.contains("Active(anon)"));
  CHECK(meminfo.contains("HugePages_Total")); // a field without a unit
  auto irqs = parse_interrupts(data_file("host-after.interrupts"));
  CHECK(irqs.at("26:IO-APIC.4-edge.ttyS0") == 15);
  CHECK(irqs.at("LOC:Local_timer_interrupts") == 9717246ULL + 10157435ULL);
  CHECK(irqs.at("ERR") == 0);
  auto softirqs = parse_softirqs(data_file("host-after.softirqs"));
  CHECK(softirqs.at("TIMER") == 645664 + 809349);
  CHECK(softirqs.size() == 10);
  auto stat = parse_stat(data_file("host-after.stat"));
  CHECK(stat.at("ctxt") == 37165206);
  CHECK(stat.at("intr") == 24344982);
  CHECK(stat.at("cpu.user") == 3561210); // the aggregate line, not cpu0
  CHECK(stat.at("cpu.steal") == 31378);
}

TEST_CASE("metrics from a recorded before/after pair") {
  auto m = system_metrics(all, recorded("before"), recorded("after"), 2.0);
  CHECK(m.at("proc-vmstat.pgfault") == 545467361.0 - 545335328.0);
  CHECK(m.at("proc-vmstat.pgpgout") == 123778508.0 - 123777928.0);
  CHECK(m.at("proc-vmstat.nr_free_pages") == 1819712.0); // a gauge: its level, although it fell
  CHECK(m.at("vmstat.system.cs") == Approx((37165206.0 - 37162883.0) / 2.0));
  CHECK(m.at("vmstat.system.in") == Approx((24344982.0 - 24343610.0) / 2.0));
  // Ticks over the run: user 135 nice 154 system 63 idle 0 iowait 0 irq 0 softirq 0 steal 1.
  CHECK(m.at("vmstat.cpu.us") == Approx(100.0 * 289 / 353));
  CHECK(m.at("vmstat.cpu.sy") == Approx(100.0 * 63 / 353));
  CHECK(m.at("vmstat.cpu.id") == 0.0);
  CHECK(m.at("vmstat.cpu.wa") == 0.0);
  CHECK(m.at("interrupts.LOC:Local_timer_interrupts") == (9717246.0 + 10157435.0) - (9716694.0 + 10156947.0));
  CHECK(m.at("interrupts.26:IO-APIC.4-edge.ttyS0") == 0.0);
  CHECK(m.at("softirqs.TIMER") == (645664.0 + 809349.0) - (645533.0 + 809254.0));
  CHECK(m.at("meminfo.MemTotal") == 24683584.0);
  for (const auto& [name, value] : m) {
    INFO(name);
    CHECK(value >= 0);
  }
}

TEST_CASE("only the chosen monitors give metrics") {
  auto m = system_metrics({"softirqs"}, recorded("before"), recorded("after"), 2.0);
  REQUIRE_FALSE(m.empty());
  for (const auto& [name, value] : m) {
    CHECK(name.starts_with("softirqs."));
  }
  CHECK(proc_files({"proc-vmstat", "time"}) == std::vector<std::string>{"vmstat"});
  CHECK(proc_files({"time"}).empty());
  CHECK(is_known_monitor("interrupts"));
  CHECK_FALSE(is_known_monitor("turbostat"));
}

TEST_CASE("missing files and fields give absent metrics") {
  Snapshot empty;
  CHECK(system_metrics(all, empty, empty, 1.0).empty());
  CHECK(system_metrics(all, recorded("before"), empty, 1.0).empty());
  // A kernel whose /proc/stat has no iowait and no ctxt (four cpu fields only).
  Snapshot before, after;
  before.files["stat"] = "cpu  10 0 10 80\nintr 100 1 2\n";
  after.files["stat"] = "cpu  20 0 30 150\nintr 300 1 2\n";
  auto m = system_metrics({"vmstat"}, before, after, 4.0);
  CHECK(m.at("vmstat.cpu.us") == Approx(10.0));
  CHECK(m.at("vmstat.cpu.sy") == Approx(20.0));
  CHECK(m.at("vmstat.cpu.id") == Approx(70.0));
  CHECK_FALSE(m.contains("vmstat.cpu.wa"));
  CHECK(m.at("vmstat.system.in") == Approx(50.0));
  CHECK_FALSE(m.contains("vmstat.system.cs"));
  // No elapsed time: no rates; the percentages stand.
  auto no_time = system_metrics({"vmstat"}, before, after, 0.0);
  CHECK_FALSE(no_time.contains("vmstat.system.in"));
  CHECK(no_time.contains("vmstat.cpu.id"));
}

TEST_CASE("counters that go backwards or wrap give no metric") {
  Snapshot before, after;
  before.files["vmstat"] = "pgfault 100\npgmajfault 18446744073709551615\nnr_free_pages 5\n";
  after.files["vmstat"] = "pgfault 90\npgmajfault 3\nnr_free_pages 4\n";
  before.files["stat"] = "cpu  10 0 10 80 5\nctxt 1000\n";
  after.files["stat"] = "cpu  20 0 30 70 6\nctxt 999\n";
  before.files["softirqs"] = "    CPU0 CPU1\nTIMER: 10 10\nNET_RX: 5 5\n";
  after.files["softirqs"] = "    CPU0 CPU1\nTIMER: 11 8\nNET_RX: 6 5\n";
  auto m = system_metrics(all, before, after, 1.0);
  CHECK_FALSE(m.contains("proc-vmstat.pgfault"));
  CHECK_FALSE(m.contains("proc-vmstat.pgmajfault"));
  CHECK(m.at("proc-vmstat.nr_free_pages") == 4.0);
  CHECK_FALSE(m.contains("vmstat.system.cs"));
  CHECK_FALSE(m.contains("vmstat.cpu.id")); // idle went backwards: no percentages at all
  CHECK_FALSE(m.contains("vmstat.cpu.us"));
  CHECK_FALSE(m.contains("softirqs.TIMER")); // 20 → 19
  CHECK(m.at("softirqs.NET_RX") == 1.0);
  auto same = system_metrics({"vmstat"}, before, before, 1.0); // no tick passed: no percentages
  CHECK_FALSE(same.contains("vmstat.cpu.id"));
}

TEST_CASE("garbage lines are skipped, good lines around them kept") {
  auto vmstat = parse_vmstat("pgfault 12\n\ngarbage\npgfree -3\npgsteal 1.5\nx 18446744073709551616\n"
                             "pgalloc 7 extra\n\x01\xff 4\npgscan 9");
  CHECK(vmstat == Counters{{"pgfault", 12}, {"pgscan", 9}});
  auto meminfo = parse_meminfo("MemTotal: 100 kB\nMemFree 5 kB\nBuffers: 7 MB\n: 3 kB\nCached: x kB\nSwap: 4\n");
  CHECK(meminfo == Counters{{"MemTotal", 100}, {"Swap", 4}});
  // No CPU header: nothing can be told apart.
  CHECK(parse_interrupts("  0: 1 2 IO-APIC 2-edge timer\n").empty());
  CHECK(parse_softirqs("").empty());
  auto irqs = parse_interrupts("  CPU0 CPU1\n"
                               "  0: 5 6 IO-APIC 2-edge timer\n"
                               "NMI: 1 18446744073709551615 Non-maskable interrupts\n" // the sum overflows
                               "LOC: x y Local timer interrupts\n"                      // no count
                               "RES 3 4 Rescheduling interrupts\n"                      // no colon
                               "MIS: 2\n"
                               "CAL: 1 2 Function call interrupts\n"
                               "CAL: 9 9 Function call interrupts\n" // a repeated label keeps the first
                               "42: 1 1 PCI-MSI eth\x1b[0m\n");        // a control byte in the name
  CHECK(irqs == Counters{{"0:IO-APIC.2-edge.timer", 11}, {"MIS", 2}, {"CAL:Function_call_interrupts", 3}});
  auto stat = parse_stat("cpu 1 2 x 4\nintr\nctxt -5\ncpu0 9 9 9 9\n");
  CHECK(stat == Counters{{"cpu.user", 1}, {"cpu.nice", 2}});
}

TEST_CASE("time metrics from a run's rusage") {
  Usage u{.elapsed_seconds = 2.0,
          .user_seconds = 1.5,
          .system_seconds = 0.25,
          .voluntary_switches = 7,
          .involuntary_switches = 3,
          .minor_faults = 1200,
          .major_faults = 1,
          .max_rss_kb = 4096};
  auto m = time_metrics(u);
  CHECK(m.at("time.elapsed_time") == 2.0);
  CHECK(m.at("time.user_time") == 1.5);
  CHECK(m.at("time.system_time") == 0.25);
  CHECK(m.at("time.voluntary_context_switches") == 7);
  CHECK(m.at("time.involuntary_context_switches") == 3);
  CHECK(m.at("time.minor_page_faults") == 1200);
  CHECK(m.at("time.major_page_faults") == 1);
  CHECK(m.at("time.maximum_resident_set_size") == 4096);
  CHECK(m.at("time.percent_of_cpu_this_job_got") == 88); // 87.5 rounded, as GNU time prints it
  u.elapsed_seconds = 0;
  CHECK_FALSE(time_metrics(u).contains("time.percent_of_cpu_this_job_got"));
  u.max_rss_kb = 0;
  CHECK_FALSE(time_metrics(u).contains("time.maximum_resident_set_size"));
}

TEST_CASE("a process's stat line and the usage of what a shell waited for") {
  // A command name with spaces and a ')' cannot shift the fields: they are counted after the last ')'.
  auto stat = parse_pid_stat("212 (my) sh (x)) S 180 212 212 0 -1 4194560 130 7 2 1 11 12 13 14 20 0 1 0 9 0\n");
  CHECK(stat == Counters{{"minflt", 130},
                         {"cminflt", 7},
                         {"majflt", 2},
                         {"cmajflt", 1},
                         {"utime", 11},
                         {"stime", 12},
                         {"cutime", 13},
                         {"cstime", 14}});
  CHECK(parse_pid_stat("212 (sh) S 180 212").empty());
  CHECK(parse_pid_stat("no parenthesis 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").empty());
  CHECK(parse_pid_stat("1 (sh) S 0 1 1 0 -1 0 1 2 3 4 5 6 -7 8").empty()); // a negative cutime is no number

  const std::string before = "99 (sh) S 1 99 99 0 -1 0 5 100 0 3 1 1 250 40 20 0 1 0 9";
  const std::string after = "99 (sh) S 1 99 99 0 -1 0 6 900 0 5 1 1 400 90 20 0 1 0 9";
  auto usage = waited_usage(before, after, 2.0);
  REQUIRE(usage.has_value());
  CHECK(usage->user_seconds == Approx(1.5));
  CHECK(usage->system_seconds == Approx(0.5));
  CHECK(usage->minor_faults == 800);
  CHECK(usage->major_faults == 2);
  CHECK(waited_usage(before, after, 2.0, 1024)->user_seconds == Approx(150.0 / 1024));
  // Unknown context switches and RSS give no metric, not a zero.
  auto m = time_metrics(*usage);
  CHECK(m.at("time.percent_of_cpu_this_job_got") == 100);
  CHECK_FALSE(m.contains("time.voluntary_context_switches"));
  CHECK_FALSE(m.contains("time.involuntary_context_switches"));
  CHECK_FALSE(m.contains("time.maximum_resident_set_size"));
  // Backwards (another shell, a reset) or unreadable: no usage.
  CHECK_FALSE(waited_usage(after, before, 2.0).has_value());
  CHECK_FALSE(waited_usage("", after, 2.0).has_value());
}
