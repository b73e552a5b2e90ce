#pragma once
// What the machine under test prints around a run besides the benchmark's output, as text between markers: the one
// format of every backend that collects on the machine and prints it back (the QEMU and LAVA initramfs /init on
// the console, the ssh boxes on the run's stdout), with the POSIX sh functions that print it (busybox ash, dash):
//   BISECTD-PROC <before|after> <file>
//   ... the text of /proc/<file> (nothing when this kernel lacks the file) ...
//   BISECTD-PROC-END
//   BISECTD-PERF <stat|profile|calltrace>
//   ... perf stat -x, / perf report --children / perf report -g folded (monitors/perf_text.hpp) ...
//   BISECTD-PERF-END

#include "lab/machine.hpp"
#include "monitors/monitors.hpp"

#include <map>
#include <string>
#include <string_view>

namespace bisectd::lab {

inline constexpr std::string_view k_proc_marker = "BISECTD-PROC";
inline constexpr std::string_view k_proc_end_marker = "BISECTD-PROC-END";
inline constexpr std::string_view k_perf_marker = "BISECTD-PERF";
inline constexpr std::string_view k_perf_end_marker = "BISECTD-PERF-END";

// A POSIX sh function that prints the /proc blocks: `bisectd_proc before|after FILE...`. Its arguments are data:
// callers pass them as words, never pasted into its text.
std::string_view proc_block_function();

// POSIX sh functions for perf around a run, on the machine's own perf (none: the run goes without):
//   bisectd_perf_try DIR [stat] [profile]  which of them work here (a test of each on `true`); says on stderr why
//                                          one does not. The profile samples `cycles`, or `cpu-clock` without a PMU
//   bisectd_perf_run DIR COMMAND...        COMMAND under perf stat (its own counts) under a system-wide perf record
//                                          (the kernel's share too), as tried; its exit status is COMMAND's
//   bisectd_perf_blocks DIR                the perf blocks of that run; removes perf's files from DIR
// DIR is a directory the shell may write (the guest's /tmp, a box's mktemp -d).
std::string_view perf_block_functions();

// What perf printed after a run, block by block; empty when it did not run.
struct PerfText {
  std::string stat, profile, calltrace;
};

// The perf metrics of a run, as the job asks: perf-stat.* over `seconds` (perf's own time when it printed it),
// perf-profile.{children,self,calltrace}.*.
std::map<std::string, double> perf_metrics(const RunSpec::Perf& perf, const PerfText& text, double seconds);

// Reads the blocks out of a stream of lines (printk timestamps already stripped).
class RunBlockReader {
public:
  // True when `line` belongs to the blocks (a block's marker or a line inside one): it went into `before`, `after`
  // or `perf` (any may be null: /proc blocks are then skipped; perf blocks, like one of an unknown kind, are then
  // no blocks and their lines the caller's). False for any other line; a line starting with "BISECTD-" also ends an
  // open block, so a lost end marker costs at most that block.
  bool take(std::string_view line, monitors::Snapshot* before, monitors::Snapshot* after, PerfText* perf = nullptr);

private:
  std::string* m_block = nullptr; // inside a block: where its lines go
  std::string m_discarded;        // a block that belongs to nothing
};

} // namespace bisectd::lab
