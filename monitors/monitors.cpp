#include "monitors/monitors.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::monitors {

namespace {

using Parser = Counters (*)(std::string_view);

Counters parsed(const Snapshot& snapshot, const std::string& file, Parser parse) {
  auto it = snapshot.files.find(file);
  return it == snapshot.files.end() ? Counters{} : parse(it->second);
}

// nr_* in /proc/vmstat are gauges (pages in a state now), not events; nr_tlb_* and the few nr_*_fail ones count.
bool is_vmstat_gauge(std::string_view name) {
  return name.starts_with("nr_") && !name.starts_with("nr_tlb_") && !name.ends_with("_fail");
}

void add_deltas(std::map<std::string, double>& out, const std::string& prefix, const Counters& before,
                const Counters& after) {
  for (const auto& [name, value] : after) {
    auto it = before.find(name);
    if (it != before.end() && value >= it->second) {
      out[prefix + name] = static_cast<double>(value - it->second);
    }
  }
}

std::optional<std::uint64_t> delta(const Counters& before, const Counters& after, const std::string& name) {
  auto b = before.find(name);
  auto a = after.find(name);
  if (b == before.end() || a == after.end() || a->second < b->second) {
    return std::nullopt;
  }
  return a->second - b->second;
}

void add_proc_vmstat(std::map<std::string, double>& out, const Counters& before, const Counters& after) {
  Counters events_before, events_after;
  for (const auto& [name, value] : after) {
    if (is_vmstat_gauge(name)) {
      out["proc-vmstat." + name] = static_cast<double>(value);
    } else {
      events_after.emplace(name, value);
    }
  }
  for (const auto& [name, value] : before) {
    if (!is_vmstat_gauge(name)) {
      events_before.emplace(name, value);
    }
  }
  add_deltas(out, "proc-vmstat.", events_before, events_after);
}

void add_vmstat(std::map<std::string, double>& out, const Counters& before, const Counters& after, double elapsed) {
  if (elapsed > 0) {
    if (auto in = delta(before, after, "intr")) {
      out["vmstat.system.in"] = static_cast<double>(*in) / elapsed;
    }
    if (auto cs = delta(before, after, "ctxt")) {
      out["vmstat.system.cs"] = static_cast<double>(*cs) / elapsed;
    }
  }
  std::map<std::string, std::uint64_t> ticks;
  std::uint64_t total = 0;
  for (const char* field : {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}) {
    auto d = delta(before, after, std::string("cpu.") + field);
    if (d) {
      ticks[field] = *d;
      total += *d;
    } else if (after.contains(std::string("cpu.") + field)) {
      return; // a field went backwards: no percentages from a broken line
    }
  }
  if (total == 0) {
    return;
  }
  auto percent = [&](std::initializer_list<const char*> fields) -> std::optional<double> {
    std::uint64_t sum = 0;
    for (const char* field : fields) {
      auto it = ticks.find(field);
      if (it == ticks.end()) {
        return std::nullopt;
      }
      sum += it->second;
    }
    return 100.0 * static_cast<double>(sum) / static_cast<double>(total);
  };
  auto put = [&](const char* name, std::optional<double> value) {
    if (value) {
      out[name] = *value;
    }
  };
  put("vmstat.cpu.us", percent({"user", "nice"}));
  put("vmstat.cpu.sy", ticks.contains("irq") ? percent({"system", "irq", "softirq"}) : percent({"system"}));
  put("vmstat.cpu.id", percent({"idle"}));
  put("vmstat.cpu.wa", percent({"iowait"}));
}

} // namespace

const std::vector<std::string>& known_monitors() {
  static const std::vector<std::string> names = {"proc-vmstat", "vmstat", "interrupts", "softirqs", "meminfo", "time"};
  return names;
}

bool is_known_monitor(std::string_view name) {
  const auto& names = known_monitors();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> proc_files(const std::set<std::string>& monitors) {
  static const std::map<std::string, std::string> file_of = {{"proc-vmstat", "vmstat"},   {"vmstat", "stat"},
                                                             {"interrupts", "interrupts"}, {"softirqs", "softirqs"},
                                                             {"meminfo", "meminfo"}};
  std::vector<std::string> out;
  for (const auto& monitor : monitors) {
    if (auto it = file_of.find(monitor); it != file_of.end()) {
      out.push_back(it->second);
    }
  }
  return out;
}

std::map<std::string, double> system_metrics(const std::set<std::string>& monitors, const Snapshot& before,
                                             const Snapshot& after, double elapsed_seconds) {
  std::map<std::string, double> out;
  if (monitors.contains("proc-vmstat")) {
    add_proc_vmstat(out, parsed(before, "vmstat", parse_vmstat), parsed(after, "vmstat", parse_vmstat));
  }
  if (monitors.contains("vmstat")) {
    add_vmstat(out, parsed(before, "stat", parse_stat), parsed(after, "stat", parse_stat), elapsed_seconds);
  }
  if (monitors.contains("interrupts")) {
    add_deltas(out, "interrupts.", parsed(before, "interrupts", parse_interrupts),
               parsed(after, "interrupts", parse_interrupts));
  }
  if (monitors.contains("softirqs")) {
    add_deltas(out, "softirqs.", parsed(before, "softirqs", parse_softirqs), parsed(after, "softirqs", parse_softirqs));
  }
  if (monitors.contains("meminfo")) {
    for (const auto& [name, value] : parsed(after, "meminfo", parse_meminfo)) {
      out["meminfo." + name] = static_cast<double>(value);
    }
  }
  return out;
}

std::map<std::string, double> time_metrics(const Usage& usage) {
  std::map<std::string, double> out = {
    {"time.elapsed_time", usage.elapsed_seconds},
    {"time.user_time", usage.user_seconds},
    {"time.system_time", usage.system_seconds},
    {"time.minor_page_faults", static_cast<double>(usage.minor_faults)},
    {"time.major_page_faults", static_cast<double>(usage.major_faults)},
  };
  if (usage.voluntary_switches) {
    out["time.voluntary_context_switches"] = static_cast<double>(*usage.voluntary_switches);
  }
  if (usage.involuntary_switches) {
    out["time.involuntary_context_switches"] = static_cast<double>(*usage.involuntary_switches);
  }
  if (usage.max_rss_kb > 0) {
    out["time.maximum_resident_set_size"] = static_cast<double>(usage.max_rss_kb);
  }
  if (usage.elapsed_seconds > 0) {
    out["time.percent_of_cpu_this_job_got"] =
      std::round(100.0 * (usage.user_seconds + usage.system_seconds) / usage.elapsed_seconds);
  }
  return out;
}

std::optional<Usage> waited_usage(std::string_view before, std::string_view after, double elapsed_seconds,
                                  double ticks_per_second) {
  auto b = parse_pid_stat(before);
  auto a = parse_pid_stat(after);
  auto ticks = delta(b, a, "cutime");
  auto system_ticks = delta(b, a, "cstime");
  auto minor = delta(b, a, "cminflt");
  auto major = delta(b, a, "cmajflt");
  if (!ticks || !system_ticks || !minor || !major || ticks_per_second <= 0) {
    return std::nullopt;
  }
  return Usage{.elapsed_seconds = elapsed_seconds,
               .user_seconds = static_cast<double>(*ticks) / ticks_per_second,
               .system_seconds = static_cast<double>(*system_ticks) / ticks_per_second,
               .minor_faults = static_cast<long>(*minor),
               .major_faults = static_cast<long>(*major)};
}

std::map<std::string, double> waited_time_metrics(const std::set<std::string>& monitors, std::string_view before,
                                                  std::string_view after, double elapsed_seconds) {
  if (!monitors.contains("time")) {
    return {};
  }
  auto usage = waited_usage(before, after, elapsed_seconds);
  return usage ? time_metrics(*usage) : std::map<std::string, double>{};
}

} // namespace bisectd::monitors
