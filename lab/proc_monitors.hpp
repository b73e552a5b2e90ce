#pragma once
// The system monitors of a run on this host: the /proc files read before and after, the child's rusage, and the
// metrics with LKP's names (monitors/monitors.hpp does the arithmetic).

#include "base/process.hpp"
#include "monitors/monitors.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <string>

namespace bisectd::lab {

// Reads the /proc files `monitors` need under `proc_root`; a file that cannot be read is left out (its metrics
// will be absent).
monitors::Snapshot read_proc_snapshot(const std::set<std::string>& monitors,
                                      const std::filesystem::path& proc_root = "/proc");

// The metrics of `monitors` for a run that took status.duration: the system ones from the snapshots, the time.*
// ones from status.usage (absent when the child was not reaped with its rusage).
std::map<std::string, double> run_monitor_metrics(const std::set<std::string>& monitors,
                                                  const monitors::Snapshot& before, const monitors::Snapshot& after,
                                                  const base::ExitStatus& status);

} // namespace bisectd::lab
