#pragma once
// The system monitors and perf of a run on an ssh box, read in the run's own ssh command (no round trip more per
// run): the remote shell prints the chosen /proc files before and after the benchmark and the box's own perf's
// blocks after it (lab/run_blocks.hpp), and its uptime and its own /proc/self/stat right around it; we cut its
// stdout back into the benchmark's output and the metrics.
//
// The run's stdout, in order:
//   BISECTD-PROC before <file> ... BISECTD-PROC-END          (each /proc file of the monitors)
//   BISECTD-RUN-BEGIN uptime=<s> stat=<the shell's /proc/self/stat>
//   ... the benchmark's stdout, byte for byte ...
//   \nBISECTD-RUN-END uptime=<s> stat=<...>                   (the newline is ours, so the output is kept exactly)
//   BISECTD-PROC after <file> ... BISECTD-PROC-END
//   BISECTD-PERF stat|profile|calltrace ... BISECTD-PERF-END    (when the job asks for perf and the box's perf works)

#include "base/error.hpp"
#include "lab/machine.hpp"
#include "lab/run_blocks.hpp"
#include "monitors/monitors.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::lab {

// The remote line of a run: remote_run_command's (`cd DIR && exec env -- ...`) when there are no monitors and no
// perf, else the monitored one above, which exits with the benchmark's status. perf's files go to a `mktemp -d`
// directory, removed after the run. Every word from the job or bisectd is quoted by base::shell_quote. Errors: as
// remote_run_command.
Result<std::string> monitored_run_command(const std::vector<std::string>& argv,
                                          const std::map<std::string, std::string>& env, const std::string& cwd,
                                          const std::set<std::string>& monitors, const RunSpec::Perf& perf = {});

struct MonitoredRun {
  std::string output; // the benchmark's stdout (what is no marker or block when the begin marker is missing)
  bool ended = false; // the end marker was seen
  monitors::Snapshot before, after;
  std::optional<double> seconds; // the box's uptime across the benchmark
  std::string stat_before, stat_after;
  PerfText perf;
};

// Never fails: what is missing (a cut connection, a shell that could not read /proc) is left empty. The begin marker
// is the first one and the end marker the last one, so a benchmark that prints markers cannot move either.
MonitoredRun parse_monitored_run(std::string_view stdout_text);

// The monitors' metrics of a run: monitors::system_metrics over the box's own elapsed time (`host_seconds`, the
// ssh command's duration, when the box gave none), for `time` monitors::waited_usage's time.* (elapsed, user,
// system, minor/major faults, percent of CPU, perf's own share included; no context switches or peak RSS: the
// shell cannot see them), and the perf metrics `perf` asks for.
std::map<std::string, double> monitored_run_metrics(const std::set<std::string>& monitors, const RunSpec::Perf& perf,
                                                    const MonitoredRun& run, double host_seconds);

} // namespace bisectd::lab
