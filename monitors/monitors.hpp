#pragma once
// System monitors around a benchmark run, with LKP's metric names: what the kernel did while the run ran.
// Pure: the caller reads the /proc files (before and after the run) and the child's rusage.

#include "monitors/proc_text.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::monitors {

// The job file's `monitors:` names, in LKP's order.
const std::vector<std::string>& known_monitors();
bool is_known_monitor(std::string_view name);

// The /proc files a set of monitors reads, as paths under /proc ("vmstat", "stat", ...): time reads none.
std::vector<std::string> proc_files(const std::set<std::string>& monitors);

// The raw text of the /proc files of one moment; a file that could not be read is absent.
struct Snapshot {
  std::map<std::string, std::string> files; // "vmstat" → text of /proc/vmstat
};

// The run's own child rusage (wait4), in LKP's units.
struct Usage {
  double elapsed_seconds = 0;
  double user_seconds = 0;
  double system_seconds = 0;
  std::optional<long> voluntary_switches; // unknown: no time.*_context_switches
  std::optional<long> involuntary_switches;
  long minor_faults = 0;
  long major_faults = 0;
  long max_rss_kb = 0; // 0: unknown, no time.maximum_resident_set_size
};

// The metrics of the chosen monitors:
//   proc-vmstat.<counter>  the counter's increase over the run (nr_* gauges: their level after the run)
//   vmstat.system.in|cs    interrupts and context switches per second
//   vmstat.cpu.us|sy|id|wa percent of all CPUs' time (us = user+nice, sy = system+irq+softirq, as vmstat(8))
//   interrupts.<source>    per-source increase summed over CPUs (names: parse_interrupts)
//   softirqs.<name>        per-name increase summed over CPUs
//   meminfo.<field>        level after the run, kB
// A counter missing on either side, or lower after than before (wrapped, reset), gives no metric; so does a
// rate over a non-positive elapsed time or a cpu line that did not advance.
std::map<std::string, double> system_metrics(const std::set<std::string>& monitors, const Snapshot& before,
                                             const Snapshot& after, double elapsed_seconds);

// time.elapsed_time, time.user_time, time.system_time (seconds), time.voluntary_context_switches,
// time.involuntary_context_switches, time.minor_page_faults, time.major_page_faults,
// time.maximum_resident_set_size (kB), time.percent_of_cpu_this_job_got (as GNU time: (user+sys)/elapsed,
// rounded; absent when elapsed is not positive).
std::map<std::string, double> time_metrics(const Usage& usage);

// The usage of what a shell waited for between two reads of its own /proc/self/stat (`before`, `after`): on an ssh
// box the benchmark is the remote shell's only child in between. User and system time from cutime/cstime (clock
// ticks of `ticks_per_second`, USER_HZ: 100 on every architecture Linux still runs on but alpha), minor and major
// faults from cminflt/cmajflt; context switches and peak RSS of a child are not in there (unknown). nullopt when
// either text is not a stat line or a counter went backwards.
std::optional<Usage> waited_usage(std::string_view before, std::string_view after, double elapsed_seconds,
                                  double ticks_per_second = 100);

// time.* from a shell's two stat reads (waited_usage) when `monitors` has "time"; empty when it has not, or when
// the reads give no usage. An ssh box's remote shell and a guest's /init both measure this way.
std::map<std::string, double> waited_time_metrics(const std::set<std::string>& monitors, std::string_view before,
                                                  std::string_view after, double elapsed_seconds);

} // namespace bisectd::monitors
