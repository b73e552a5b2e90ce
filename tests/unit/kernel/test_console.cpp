#include "lab/console.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include <unistd.h>

using namespace bisectd;

namespace {

const std::string k_good_boot = "SeaBIOS (version 1.16.2)\r\n"
                                "[    0.000000] Linux version 6.1.192-gabc (bisectd@bisectd) #1 SMP\r\n"
                                "[    1.140037] Run /init as init process\r\n"
                                "BISECTD-BOOT release=6.1.192-gabc\r\n"
                                "BISECTD-RUN-BEGIN 0\r\n"
                                "page_fault.ops_per_sec: 96886.4\r\n"
                                "[    1.500000] random: crng init done\r\n"
                                "page_fault.ops: 97280\r\n"
                                "\r\n"
                                "BISECTD-RUN-END 0 rc=0 start=1.22 end=2.29\r\n"
                                "BISECTD-RUN-BEGIN 1\r\n"
                                "oops\r\n"
                                "\r\n"
                                "BISECTD-RUN-END 1 rc=3 start=2.30 end=2.40\r\n"
                                "BISECTD-DONE\r\n"
                                "[    3.400000] reboot: Restarting system\r\n";

} // namespace

TEST_CASE("lab::parse_console reads markers, runs and their output", "[kernel]") {
  auto log = lab::parse_console(k_good_boot);
  CHECK(log.booted);
  CHECK(log.release == "6.1.192-gabc");
  CHECK(log.done);
  CHECK(log.crash.empty());
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].index == 0);
  CHECK(log.runs[1].index == 1);
  CHECK(log.runs[0].ended);
  CHECK(log.runs[0].exit_code == 0);
  CHECK(log.runs[0].seconds == Approx(1.07));
  // the kernel line in the middle of the run is not benchmark output
  CHECK(log.runs[0].output == "page_fault.ops_per_sec: 96886.4\npage_fault.ops: 97280\n\n");
  CHECK(log.runs[1].exit_code == 3);
  CHECK(log.runs[1].output.find("oops") != std::string::npos);
  CHECK(lab::boot_failure(log, "6.1.192-gabc").empty());
  CHECK(lab::boot_failure(log, "").empty());
}

TEST_CASE("lab::parse_console keeps a run's /proc snapshots apart from its output", "[kernel]") {
  const std::string console = "BISECTD-BOOT release=6.1.192-gabc\r\n"
                              "BISECTD-RUN-BEGIN 0\r\n"
                              "BISECTD-PROC before meminfo\r\n"
                              "MemTotal:         236420 kB\r\n"
                              "MemFree:          214332 kB\r\n"
                              "BISECTD-PROC-END\r\n"
                              "BISECTD-PROC before stat\r\n"
                              "cpu  10 0 20 1000 0 0 0 0 0 0\r\n"
                              "intr 500\r\n"
                              "ctxt 100\r\n"
                              "BISECTD-PROC-END\r\n"
                              "page_fault.ops_per_sec: 96886.4\r\n"
                              "\r\n"
                              "BISECTD-PROC after meminfo\r\n"
                              "MemTotal:         236420 kB\r\n"
                              "[    2.000000] a printk line inside the block\r\n"
                              "MemFree:          200000 kB\r\n"
                              "BISECTD-PROC-END\r\n"
                              "BISECTD-PROC after stat\r\n"
                              "cpu  10 0 120 1100 0 0 0 0 0 0\r\n"
                              "intr 900\r\n"
                              "ctxt 300\r\n"
                              // the end marker is lost: the run's end marker closes the block
                              "BISECTD-RUN-END 0 rc=0 start=1.0 end=3.0\r\n"
                              "BISECTD-PROC after stat\r\n" // outside any run it belongs to the last one: ignored
                              "BISECTD-PROC-END\r\n"
                              "BISECTD-DONE\r\n";
  auto log = lab::parse_console(console);
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.output == "page_fault.ops_per_sec: 96886.4\n\n");
  CHECK(run.before.files.at("meminfo") == "MemTotal:         236420 kB\nMemFree:          214332 kB\n");
  CHECK(run.after.files.at("meminfo") == "MemTotal:         236420 kB\nMemFree:          200000 kB\n");
  CHECK(run.after.files.at("stat").find("ctxt 300") != std::string::npos);
  CHECK(run.ended);
  CHECK(run.seconds == Approx(2.0));

  lab::VisitRequest request;
  request.log_dir = std::filesystem::temp_directory_path();
  request.run.primary = "page_fault.ops_per_sec";
  request.run.monitors = {"meminfo", "vmstat"};
  auto result = lab::run_result(run, request, "console-test-" + std::to_string(::getpid()), "test");
  std::filesystem::remove(result.log_path);
  CHECK(result.ok);
  CHECK(result.metrics.at("page_fault.ops_per_sec") == Approx(96886.4));
  CHECK(result.metrics.at("meminfo.MemFree") == Approx(200000));
  CHECK(result.metrics.at("vmstat.system.cs") == Approx(100)); // 200 switches over 2 s of guest uptime
  CHECK(result.metrics.at("vmstat.system.in") == Approx(200));
  CHECK(result.metrics.at("vmstat.cpu.sy") == Approx(50)); // 100 of 200 ticks in system time
  CHECK_FALSE(result.metrics.contains("proc-vmstat.pgfault")); // not asked for, and not printed
}

TEST_CASE("lab::parse_console: /init's stat lines give the run's time.* metrics", "[kernel]") {
  // /init's own /proc/self/stat around the benchmark: cutime 3 -> 153, cstime 4 -> 54 ticks (USER_HZ 100),
  // cminflt 7 -> 5207, cmajflt 0 -> 1.
  const std::string console = "BISECTD-BOOT release=6.1.192\r\n"
                              "BISECTD-RUN-BEGIN 0\r\n"
                              "page_fault.ops_per_sec: 96886.4\r\n"
                              "\r\n"
                              "BISECTD-STAT before 1 (init) S 0 1 1 0 -1 4194560 10 7 0 0 5 6 3 4 20 0 1 0 9\r\n"
                              "[    2.000000] a printk line between them\r\n"
                              "BISECTD-STAT after 1 (init) S 0 1 1 0 -1 4194560 12 5207 0 1 5 6 153 54 20 0 1 0 9\r\n"
                              "BISECTD-RUN-END 0 rc=0 start=1.0 end=3.0\r\n"
                              "BISECTD-DONE\r\n";
  auto log = lab::parse_console(console);
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.output == "page_fault.ops_per_sec: 96886.4\n\n"); // the stat lines are not the benchmark's
  CHECK(run.stat_before.starts_with("1 (init) S"));
  CHECK(run.stat_after.find(" 153 54 ") != std::string::npos);

  lab::VisitRequest request;
  request.log_dir = std::filesystem::temp_directory_path();
  request.run.primary = "page_fault.ops_per_sec";
  auto boot = "console-time-" + std::to_string(::getpid());
  auto without = lab::run_result(run, request, boot, "test");
  std::filesystem::remove(without.log_path);
  CHECK_FALSE(without.metrics.contains("time.user_time")); // not asked for
  request.run.monitors = {"time"};
  auto result = lab::run_result(run, request, boot, "test");
  std::filesystem::remove(result.log_path);
  CHECK(result.ok);
  CHECK(result.metrics.at("time.elapsed_time") == Approx(2.0));
  CHECK(result.metrics.at("time.user_time") == Approx(1.5));
  CHECK(result.metrics.at("time.system_time") == Approx(0.5));
  CHECK(result.metrics.at("time.minor_page_faults") == 5200);
  CHECK(result.metrics.at("time.major_page_faults") == 1);
}

TEST_CASE("lab::run_result: a guest benchmark that failed with its file system full is disk_full", "[kernel]") {
  lab::VisitRequest request;
  request.log_dir = std::filesystem::temp_directory_path();
  request.run.primary = "page_fault.ops_per_sec";
  lab::ConsoleRun run;
  run.output = "page_fault: write /tmp/scratch: No space left on device\n";
  run.ended = true;
  run.exit_code = 1;
  auto boot = "console-disk-full-" + std::to_string(::getpid());
  auto full = lab::run_result(run, request, boot, "test");
  std::filesystem::remove(full.log_path);
  CHECK(full.disk_full);
  CHECK(full.error.starts_with("disk full: the benchmark said so; benchmark exit 1"));

  run.exit_code = 0; // it said so, and still exited 0: the run is judged on its metrics alone
  auto clean_exit = lab::run_result(run, request, boot, "test");
  std::filesystem::remove(clean_exit.log_path);
  CHECK_FALSE(clean_exit.disk_full);
  CHECK_FALSE(clean_exit.ok);
}

TEST_CASE("lab::parse_console spots crashes", "[kernel]") {
  SECTION("panic") {
    auto log = lab::parse_console("[    0.9] Linux version 6.1\n[    1.2] Kernel panic - not syncing: No working init "
                                  "found.  Try passing init= option to kernel.\n");
    CHECK(log.crash.starts_with("Kernel panic - not syncing: No working init found"));
    CHECK(lab::boot_failure(log, "").starts_with("kernel crashed: Kernel panic"));
  }
  SECTION("oops during a run, after the marker") {
    auto log = lab::parse_console("BISECTD-BOOT release=r\nBISECTD-RUN-BEGIN 0\n[    2.0] BUG: kernel NULL pointer "
                                  "dereference, address: 0000000000000000\n[    2.0] Oops: 0002 [#1] SMP\n");
    CHECK(log.booted);
    CHECK(log.crash.starts_with("BUG: kernel NULL pointer dereference"));
    CHECK_FALSE(lab::boot_failure(log, "r").empty());
  }
  SECTION("a second banner means the machine restarted (triple fault)") {
    auto log = lab::parse_console("[    0.0] Linux version 6.1\nBISECTD-BOOT release=r\n[    0.0] Linux version 6.1\n");
    CHECK(log.crash.find("triple fault") != std::string::npos);
  }
  SECTION("benchmark text that merely mentions a bug is not a crash") {
    auto log = lab::parse_console("BISECTD-BOOT release=r\nBISECTD-RUN-BEGIN 0\nno BUG: found\n");
    CHECK(log.crash.empty());
  }
}

TEST_CASE("lab::boot_failure: no marker, wrong kernel", "[kernel]") {
  auto silent = lab::parse_console("SeaBIOS\nBooting from ROM...\n");
  CHECK_FALSE(silent.booted);
  CHECK(lab::boot_failure(silent, "").starts_with("no boot marker"));
  auto other = lab::parse_console("BISECTD-BOOT release=6.1.192-gdeadbeef0000\n");
  CHECK(lab::boot_failure(other, "6.1.192-g0123456789ab") ==
        "booted kernel is '6.1.192-gdeadbeef0000', expected '6.1.192-g0123456789ab'");
}

// Found by tests/fuzz/console: "rc=1e30" overflowed a float-to-int conversion (undefined behaviour). An exit status
// that is not a whole number in range is unknown (-1): the run fails rather than passing as rc=0.
TEST_CASE("lab::parse_console: an exit status out of range or not a number is unknown", "[kernel]") {
  auto log = lab::parse_console("BISECTD-BOOT release=r\n"
                                "BISECTD-RUN-BEGIN 0\nBISECTD-RUN-END 0 rc=33333333333333333333333333333 start=1 end=2\n"
                                "BISECTD-RUN-BEGIN 1\nBISECTD-RUN-END 1 rc=1e30 start=1 end=2\n"
                                "BISECTD-RUN-BEGIN 2\nBISECTD-RUN-END 2 rc=zero start=1 end=2\n"
                                "BISECTD-RUN-BEGIN 3\nBISECTD-RUN-END 3 rc=-2 start=1 end=2\n");
  REQUIRE(log.runs.size() == 4);
  CHECK(log.runs[0].exit_code == -1);
  CHECK(log.runs[1].exit_code == -1);
  CHECK(log.runs[2].exit_code == -1);
  CHECK(log.runs[3].exit_code == -2);
  CHECK(log.runs[3].ended);
}

TEST_CASE("lab::parse_console keeps a run's perf blocks apart from its output", "[kernel]") {
  const std::string console = "BISECTD-BOOT release=6.1.192-gabc\r\n"
                              "bisectd: perf profile unavailable: no perf in the initramfs\r\n"
                              "BISECTD-RUN-BEGIN 0\r\n"
                              "page_fault.ops_per_sec: 96886.4\r\n"
                              "\r\n"
                              "BISECTD-PERF stat\r\n"
                              "2004.10,msec,task-clock,2004100000,100.00,0.999,CPUs utilized\r\n"
                              "[    2.000000] a printk line inside the block\r\n"
                              "310,,context-switches,2004100000,100.00,154.683,/sec\r\n"
                              "<not supported>,,cycles,0,100.00,,\r\n"
                              "BISECTD-PERF-END\r\n"
                              "BISECTD-PERF profile\r\n"
                              "# Children      Self  Symbol\r\n"
                              "    40.00%    30.00%  [k] mm_account_fault_locality\r\n"
                              "    45.00%     2.00%  [k] handle_mm_fault\r\n"
                              "BISECTD-PERF-END\r\n"
                              "BISECTD-PERF calltrace\r\n"
                              "    30.00%  [k] mm_account_fault_locality\r\n"
                              "30.00% main;asm_exc_page_fault;handle_mm_fault;mm_account_fault_locality\r\n"
                              // the end marker is lost: the run's end marker closes the block
                              "BISECTD-RUN-END 0 rc=0 start=1.0 end=3.0\r\n"
                              "BISECTD-RUN-BEGIN 1\r\n"
                              "page_fault.ops_per_sec: 96000\r\n"
                              "BISECTD-PERF profile\r\n" // a run too short to sample: perf report printed nothing
                              "BISECTD-PERF-END\r\n"
                              "BISECTD-PERF bogus\r\n" // not a block: its lines are the run's output
                              "stray\r\n"
                              "BISECTD-RUN-END 1 rc=0 start=3.0 end=5.0\r\n"
                              "BISECTD-DONE\r\n";
  auto log = lab::parse_console(console);
  REQUIRE(log.runs.size() == 2);
  const auto& run = log.runs[0];
  CHECK(run.output == "page_fault.ops_per_sec: 96886.4\n\n");
  CHECK(run.perf.stat.find("context-switches") != std::string::npos);
  CHECK(run.perf.stat.find("printk") == std::string::npos);
  CHECK(run.perf.profile.find("mm_account_fault_locality") != std::string::npos);
  CHECK(run.perf.profile.find("main;") == std::string::npos);
  CHECK(run.perf.calltrace.find("main;asm_exc_page_fault") != std::string::npos);
  CHECK(log.runs[1].perf.profile.empty());
  CHECK(log.runs[1].output == "page_fault.ops_per_sec: 96000\nstray\n");

  lab::VisitRequest request;
  request.log_dir = std::filesystem::temp_directory_path();
  request.run.primary = "page_fault.ops_per_sec";
  request.run.perf = {.stat = true, .profile = true};
  auto boot = "console-perf-test-" + std::to_string(::getpid());
  auto result = lab::run_result(run, request, boot, "test");
  std::filesystem::remove(result.log_path);
  CHECK(result.ok);
  // Rates over perf's own time (2004.10 msec at 0.999 CPUs utilized), not the 2 s of guest uptime around the run.
  CHECK(result.metrics.at("perf-stat.ps.task-clock") == Approx(999));
  CHECK(result.metrics.at("perf-stat.ps.context-switches") == Approx(310 / (2.0041 / 0.999)));
  CHECK_FALSE(result.metrics.contains("perf-stat.ps.cycles"));
  CHECK(result.metrics.at("perf-profile.self.cycles-pp.mm_account_fault_locality") == Approx(30));
  CHECK(result.metrics.at("perf-profile.children.cycles-pp.handle_mm_fault") == Approx(45));
  CHECK(result.metrics.at("perf-profile.calltrace.cycles-pp.mm_account_fault_locality.handle_mm_fault."
                          "asm_exc_page_fault.main") == Approx(30));
  auto unsampled = lab::run_result(log.runs[1], request, boot, "test");
  std::filesystem::remove(unsampled.log_path);
  CHECK(unsampled.ok); // no profile: still a sample, with no perf-profile.* metric
  CHECK(unsampled.metrics.size() == 1);

  request.run.perf = {};
  auto off = lab::run_result(run, request, boot, "test");
  std::filesystem::remove(off.log_path);
  CHECK(off.metrics.size() == 1); // perf not asked for: its blocks are not read
}
