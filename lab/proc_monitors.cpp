#include "lab/proc_monitors.hpp"

#include "base/fs.hpp"

#include <chrono>

namespace bisectd::lab {

monitors::Snapshot read_proc_snapshot(const std::set<std::string>& monitors, const std::filesystem::path& proc_root) {
  monitors::Snapshot snapshot;
  for (const auto& file : monitors::proc_files(monitors)) {
    if (auto text = base::read_file(proc_root / file)) {
      snapshot.files[file] = std::move(*text);
    }
  }
  return snapshot;
}

std::map<std::string, double> run_monitor_metrics(const std::set<std::string>& monitors,
                                                  const monitors::Snapshot& before, const monitors::Snapshot& after,
                                                  const base::ExitStatus& status) {
  double elapsed = std::chrono::duration<double>(status.duration).count();
  auto out = monitors::system_metrics(monitors, before, after, elapsed);
  if (monitors.contains("time") && status.usage) {
    const auto& u = *status.usage;
    auto time = monitors::time_metrics(monitors::Usage{.elapsed_seconds = elapsed,
                                                       .user_seconds = u.user_seconds,
                                                       .system_seconds = u.system_seconds,
                                                       .voluntary_switches = u.voluntary_switches,
                                                       .involuntary_switches = u.involuntary_switches,
                                                       .minor_faults = u.minor_faults,
                                                       .major_faults = u.major_faults,
                                                       .max_rss_kb = u.max_rss_kb});
    out.merge(time);
  }
  return out;
}

} // namespace bisectd::lab
