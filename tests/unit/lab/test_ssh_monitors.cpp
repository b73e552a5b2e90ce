// The monitors of a run on an ssh box: the monitored remote line run by real shells (dash, busybox ash) on this
// host's /proc, and the parse of a recorded remote output into metrics with LKP's names.

#include "base/process.hpp"
#include "base/strings.hpp"
#include "lab/console.hpp"
#include "lab/run_blocks.hpp"
#include "lab/ssh_monitors.hpp"
#include "lab/ssh_remote.hpp"
#include "support/temp_dir.hpp"
#include "support/text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace bisectd;
using namespace std::chrono_literals;

using bisectd::testing::contains;

namespace {

const std::set<std::string> all = {"proc-vmstat", "vmstat", "interrupts", "softirqs", "meminfo", "time"};


// What a box (busybox ash, 2 CPUs) printed for one run of a benchmark that printed two lines, the second without
// a newline; its kernel has no /proc/softirqs (an empty block). Trimmed to a few lines per file.
constexpr std::string_view k_recorded =
  "BISECTD-PROC before vmstat\n"
  "nr_free_pages 118000\n"
  "pgfault 50000\n"
  "pgmajfault 12\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC before stat\n"
  "cpu  100 0 50 800 10 0 5 0 0 0\n"
  "cpu0 50 0 25 400 5 0 3 0 0 0\n"
  "intr 7000 1 2 3\n"
  "ctxt 9000\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC before interrupts\n"
  "           CPU0       CPU1       \n"
  "  0:         35          0   IO-APIC   2-edge      timer\n"
  "LOC:       1000       1100   Local timer interrupts\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC before softirqs\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC before meminfo\n"
  "MemTotal:         483060 kB\n"
  "MemFree:          472000 kB\n"
  "BISECTD-PROC-END\n"
  "BISECTD-RUN-BEGIN uptime=100.50 stat=212 (sh) S 180 212 212 0 -1 4194560 130 7 0 0 1 2 3 4 20 0 1 0 9\n"
  "page_fault.ops_per_sec: 123456\n"
  "BISECTD-PROC after vmstat\n" // the benchmark's own line: output, not a block
  "no newline at the end"
  "\nBISECTD-RUN-END uptime=102.50 stat=212 (sh) S 180 212 212 0 -1 4194560 131 5207 0 1 1 2 153 54 20 0 1 0 9\n"
  "BISECTD-PROC after vmstat\n"
  "nr_free_pages 117000\n"
  "pgfault 56000\n"
  "pgmajfault 13\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC after stat\n"
  "cpu  200 0 100 1045 10 0 10 0 0 0\n"
  "intr 9000 1 2 3\n"
  "ctxt 10000\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC after interrupts\n"
  "           CPU0       CPU1       \n"
  "  0:         35          0   IO-APIC   2-edge      timer\n"
  "LOC:       1200       1400   Local timer interrupts\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC after softirqs\n"
  "BISECTD-PROC-END\n"
  "BISECTD-PROC after meminfo\n"
  "MemTotal:         483060 kB\n"
  "MemFree:          470000 kB\n"
  "BISECTD-PROC-END\n";

} // namespace

TEST_CASE("ssh monitors: a recorded remote output gives the benchmark's output and LKP's metrics", "[lab][ssh]") {
  auto run = lab::parse_monitored_run(k_recorded);
  CHECK(run.ended);
  CHECK(run.output == "page_fault.ops_per_sec: 123456\nBISECTD-PROC after vmstat\nno newline at the end");
  REQUIRE(run.seconds.has_value());
  CHECK(*run.seconds == Approx(2.0));
  auto m = lab::monitored_run_metrics(all, {}, run, 2.3);
  CHECK(m.at("proc-vmstat.pgfault") == 6000);
  CHECK(m.at("proc-vmstat.pgmajfault") == 1);
  CHECK(m.at("proc-vmstat.nr_free_pages") == 117000); // a gauge: its level after the run
  CHECK(m.at("vmstat.system.in") == Approx(1000));    // 2000 interrupts over the box's 2.0 s, not ssh's 2.3 s
  CHECK(m.at("vmstat.system.cs") == Approx(500));
  CHECK(m.at("vmstat.cpu.us") == Approx(25));    // 100 of 400 ticks
  CHECK(m.at("vmstat.cpu.sy") == Approx(13.75)); // (50 + 5) of 400
  CHECK(m.at("vmstat.cpu.id") == Approx(61.25));
  CHECK(m.at("vmstat.cpu.wa") == 0);
  CHECK(m.at("interrupts.LOC:Local_timer_interrupts") == 500);
  CHECK(m.at("interrupts.0:IO-APIC.2-edge.timer") == 0);
  CHECK(m.at("meminfo.MemFree") == 470000);
  // time.* from the shell's own stat: cutime 3 → 153, cstime 4 → 54 ticks; cminflt 7 → 5207, cmajflt 0 → 1.
  CHECK(m.at("time.elapsed_time") == Approx(2.0));
  CHECK(m.at("time.user_time") == Approx(1.5));
  CHECK(m.at("time.system_time") == Approx(0.5));
  CHECK(m.at("time.minor_page_faults") == 5200);
  CHECK(m.at("time.major_page_faults") == 1);
  CHECK(m.at("time.percent_of_cpu_this_job_got") == 100);
  // What the box cannot say is absent, not zero: no softirqs on this kernel, no switches or RSS of a child.
  for (const auto& [name, value] : m) {
    CHECK_FALSE(name.starts_with("softirqs."));
  }
  CHECK_FALSE(m.contains("time.voluntary_context_switches"));
  CHECK_FALSE(m.contains("time.maximum_resident_set_size"));
  // Only the chosen monitors.
  auto only = lab::monitored_run_metrics({"interrupts"}, {}, run, 2.3);
  CHECK(only.size() == 2);
}

TEST_CASE("ssh monitors: a cut or partial remote output loses metrics, never the output", "[lab][ssh]") {
  std::string text(k_recorded);
  // The connection died during the run: the output so far, no after snapshot, no metric that needs one.
  auto cut = lab::parse_monitored_run(text.substr(0, text.find("no newline")));
  CHECK_FALSE(cut.ended);
  CHECK(cut.output == "page_fault.ops_per_sec: 123456\nBISECTD-PROC after vmstat\n");
  CHECK(lab::monitored_run_metrics(all, {}, cut, 1.0).empty());
  // No begin marker (the shell failed before it, e.g. at `cd`): its stdout is the output.
  auto early = lab::parse_monitored_run("sh: cd: can't cd to /x\n");
  CHECK(early.output == "sh: cd: can't cd to /x\n");
  CHECK_FALSE(early.ended);
  // The benchmark prints a fake end marker: the last one is the shell's.
  auto fake = lab::parse_monitored_run("BISECTD-RUN-BEGIN uptime=1.00 stat=\nx\nBISECTD-RUN-END uptime=9.00 stat=\ny"
                                       "\nBISECTD-RUN-END uptime=2.00 stat=\n");
  CHECK(fake.output == "x\nBISECTD-RUN-END uptime=9.00 stat=\ny");
  CHECK(fake.seconds == 1.0);
  // Garbage where the uptime and stat should be: no time.*, no rates; no exception.
  auto garbage = lab::parse_monitored_run("BISECTD-RUN-BEGIN uptime=abc stat=1 (sh) S\n\nBISECTD-RUN-END uptime=\n");
  CHECK_FALSE(garbage.seconds.has_value());
  auto m = lab::monitored_run_metrics(all, {}, garbage, 0.5);
  CHECK(m.empty());
}

TEST_CASE("ssh monitors: without monitors the run line is the plain exec one", "[lab][ssh]") {
  CHECK(lab::monitored_run_command({"bench"}, {}, "/", {}).value() == "cd / && exec env -- bench");
  auto line = lab::monitored_run_command({"bench", "a b;$(reboot)"}, {{"X", "it's"}}, "/tmp/d ir", all);
  REQUIRE(line.has_value());
  CHECK(contains(*line, "cd '/tmp/d ir' && {"));
  CHECK(contains(*line, "env -- 'X=it'\\''s' bench 'a b;$(reboot)'; bisectd_rc=$?;"));
  CHECK(contains(*line, "bisectd_proc before interrupts meminfo vmstat softirqs stat;"));
  CHECK(lab::monitored_run_command({"bench", std::string("a\0b", 3)}, {}, "/", all).error().code ==
        ErrorCode::invalid_input);
}

TEST_CASE("ssh monitors: the monitored line in real shells keeps the output, the exit status and the job's words",
          "[lab][ssh]") {
  test::TempDir tmp;
  auto dir = tmp.path() / "run dir";
  std::filesystem::create_directories(dir);
  // The benchmark: prints the hostile env value and an argument back, works a little (the CPU line must advance),
  // ends without a newline and exits 3.
  std::vector<std::string> argv{"sh", "-c",
                                "printf 'x: %s\\n' \"$X\"; printf 'arg: %s\\n' \"$0\"; i=0; "
                                "while [ $i -lt 100000 ]; do i=$((i + 1)); done; printf 'bench.ops: 5'; exit 3",
                                "a b;$(touch pwned)"};
  auto line = lab::monitored_run_command(argv, {{"X", "it's $(touch pwned) `x` \\n"}}, dir.string(), all);
  REQUIRE(line.has_value());
  std::vector<std::vector<std::string>> shells{{"/bin/sh", "-c"}};
  if (std::filesystem::exists("/bin/busybox")) {
    shells.push_back({"/bin/busybox", "sh", "-c"}); // the boxes' shell (ssh-box.sh, initramfs rescue systems)
  }
  for (auto shell : shells) {
    INFO(shell.front());
    shell.push_back(*line);
    base::Command cmd;
    cmd.argv = shell;
    cmd.timeout = 60s;
    auto status = base::run(cmd);
    REQUIRE(status.has_value());
    INFO(status->err);
    CHECK(status->code == 3);
    CHECK(status->err.empty());
    auto run = lab::parse_monitored_run(status->out);
    CHECK(run.ended);
    CHECK(run.output == "x: it's $(touch pwned) `x` \\n\narg: a b;$(touch pwned)\nbench.ops: 5");
    CHECK_FALSE(std::filesystem::exists(dir / "pwned"));
    for (const auto& file : {"vmstat", "stat", "interrupts", "softirqs", "meminfo"}) {
      CHECK(run.before.files.contains(file));
      CHECK(run.after.files.contains(file));
    }
    REQUIRE(run.seconds.has_value());
    auto m = lab::monitored_run_metrics(all, {}, run, 1.0);
    CHECK(m.at("proc-vmstat.pgfault") > 0);
    CHECK(m.contains("vmstat.cpu.us"));
    CHECK(m.contains("softirqs.TIMER"));
    CHECK(m.at("meminfo.MemTotal") > 0);
    CHECK(m.at("time.minor_page_faults") > 0); // exec alone faults pages in
    CHECK(m.contains("time.user_time"));
    CHECK(m.at("time.elapsed_time") == *run.seconds);
  }
}

TEST_CASE("proc blocks: what bisectd_proc prints in a real shell, the console parser reads back", "[lab][ssh]") {
  // The QEMU/LAVA /init and the ssh line share the function; a file this kernel lacks gives an empty block.
  base::Command cmd;
  cmd.argv = {"/bin/sh", "-c",
              std::string(lab::proc_block_function()) +
                "; echo 'BISECTD-RUN-BEGIN 0'; bisectd_proc before vmstat no-such-file; echo out; "
                "bisectd_proc after vmstat; echo 'BISECTD-RUN-END 0 rc=0 start=1 end=2'"};
  cmd.timeout = 30s;
  auto status = base::run(cmd);
  REQUIRE(status.has_value());
  auto log = lab::parse_console(status->out);
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.output == "out\n");
  CHECK(run.before.files.at("no-such-file").empty());
  auto m = monitors::system_metrics({"proc-vmstat"}, run.before, run.after, run.seconds);
  CHECK(m.at("proc-vmstat.pgfault") > 0);
}

TEST_CASE("ssh perf: the box's own perf around the run in real shells, or the run without it", "[lab][ssh]") {
  test::TempDir tmp;
  auto perf_dir = tmp.path() / "tmp"; // mktemp -d's TMPDIR: perf's files must be gone after the run
  std::filesystem::create_directories(perf_dir);
  // Works about 0.3 s of CPU, so that a sampling profile has samples, and exits 4.
  std::vector<std::string> argv{
    "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done; printf 'bench.ops: 5\\n'; exit 4"};
  const lab::RunSpec::Perf perf{.stat = true, .profile = true};
  auto line = lab::monitored_run_command(argv, {}, tmp.path().string(), {}, perf);
  REQUIRE(line.has_value());
  base::Command probe;
  probe.argv = {"perf", "stat", "-x,", "-e", "task-clock", "-o", "/dev/null", "--", "true"};
  probe.timeout = 30s;
  auto probed = base::run(probe);
  bool has_perf = probed.has_value() && probed->ok();
  std::vector<std::vector<std::string>> shells{{"/bin/sh", "-c"}};
  if (std::filesystem::exists("/bin/busybox")) {
    shells.push_back({"/bin/busybox", "sh", "-c"});
  }
  for (auto shell : shells) {
    INFO(shell.front() << (has_perf ? " (perf works here)" : " (no perf here)"));
    shell.push_back(*line);
    base::Command cmd;
    cmd.argv = shell;
    cmd.env = {{"TMPDIR", perf_dir.string()}};
    cmd.timeout = 120s;
    auto status = base::run(cmd);
    REQUIRE(status.has_value());
    INFO(status->err);
    CHECK(status->code == 4);
    auto run = lab::parse_monitored_run(status->out);
    CHECK(run.ended);
    CHECK(run.output == "bench.ops: 5\n");
    CHECK(std::filesystem::is_empty(perf_dir));
    auto m = lab::monitored_run_metrics({}, perf, run, 1.0);
    if (has_perf) {
      CHECK(m.at("perf-stat.ps.task-clock") > 0);
      CHECK(m.contains("perf-stat.ps.context-switches"));
      auto has_prefix = [&](std::string_view prefix) {
        return std::any_of(m.begin(), m.end(), [&](const auto& metric) { return metric.first.starts_with(prefix); });
      };
      CHECK(has_prefix("perf-profile.self.cycles-pp."));
      CHECK(has_prefix("perf-profile.children.cycles-pp."));
      CHECK(has_prefix("perf-profile.calltrace.cycles-pp."));
    } else {
      CHECK(m.empty());
      CHECK(contains(status->err, "perf"));
      CHECK(contains(status->err, "unavailable"));
    }
  }
}
