#pragma once
// The serial console of a QEMU boot: the markers our initramfs /init prints, and the kernel messages
// that mean the boot failed (panic, oops, BUG, a restart after a triple fault).
//
// /init prints, one per line:
//   BISECTD-BOOT release=<uname -r>
//   BISECTD-RUN-BEGIN <i>
//   BISECTD-PROC before <file>   ... /proc/<file> ...   BISECTD-PROC-END   (each file of the run's monitors,
//                                                                         lab/run_blocks.hpp)
//   ... the benchmark's output ...
//   BISECTD-PROC after <file>    ... /proc/<file> ...   BISECTD-PROC-END
//   BISECTD-STAT before|after <the shell's /proc/self/stat around the benchmark>   (the `time` monitor)
//   BISECTD-PERF <stat|profile|calltrace> ... BISECTD-PERF-END             (when the job asks for perf and the
//                                                                         guest could run it)
//   BISECTD-RUN-END <i> rc=<exit code> start=<uptime> end=<uptime>
//   BISECTD-DONE

#include "lab/machine.hpp"
#include "lab/run_blocks.hpp"
#include "monitors/monitors.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace bisectd::lab {

inline constexpr std::string_view k_boot_marker = "BISECTD-BOOT";
inline constexpr std::string_view k_run_begin_marker = "BISECTD-RUN-BEGIN";
inline constexpr std::string_view k_run_end_marker = "BISECTD-RUN-END";
inline constexpr std::string_view k_done_marker = "BISECTD-DONE";
inline constexpr std::string_view k_stat_marker = "BISECTD-STAT";

struct ConsoleRun {
  int index = 0;
  std::string output; // the run's lines, kernel (printk) lines left out
  bool ended = false; // its end marker was seen
  int exit_code = -1;
  double seconds = 0; // guest uptime around the benchmark
  // The /proc files printed before and after the benchmark (the run's monitors), for monitors::system_metrics.
  monitors::Snapshot before, after;
  // What perf printed after the benchmark; empty when it did not run.
  PerfText perf;
  // /init's own /proc/self/stat before and after the benchmark (its only child then), for the `time` monitor.
  std::string stat_before, stat_after;
};

struct ConsoleLog {
  bool booted = false; // the boot marker was seen
  std::string release; // the `uname -r` printed with it
  std::vector<ConsoleRun> runs;
  bool done = false; // the final marker was seen
  std::string crash; // the first line saying the kernel crashed, empty if none
};

// Parses a console log (complete or still growing). Never fails: unknown lines are ignored.
ConsoleLog parse_console(std::string_view text);

// Why the boot counts as failed, or "" when it did not: a crash, no boot marker, or a release other
// than `expected_release` (not checked when that is empty).
std::string boot_failure(const ConsoleLog& log, std::string_view expected_release);

// One run of a booted visit as a RunResult: metrics parsed as the job says plus the monitors' metrics from the
// run's /proc snapshots and stat lines (time.*: user and system time of what /init waited for) and perf-stat.* /
// perf-profile.* from its perf blocks, the run's output kept in
// `request.log_dir` as BOOT_ID-runN.log, and why it failed (no end marker, non-zero exit, no primary metric).
// `backend` names the machine kind in the warning logged when the log cannot be written.
RunResult run_result(const ConsoleRun& run, const VisitRequest& request, const std::string& boot_id,
                     const char* backend);

} // namespace bisectd::lab
