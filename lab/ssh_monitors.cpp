#include "lab/ssh_monitors.hpp"

#include "base/strings.hpp"
#include "lab/console.hpp"
#include "lab/run_blocks.hpp"
#include "lab/ssh_remote.hpp"

#include <charconv>

namespace bisectd::lab {

namespace {

// The console's run markers (lab/console.hpp), here with the box's uptime and the shell's stat as their fields.
const std::string k_begin = std::string(k_run_begin_marker) + " ";
const std::string k_end = "\n" + std::string(k_run_end_marker) + " ";

// The box's uptime and the shell's own stat, read by builtins (no process started inside the timed part), printed
// with printf (dash's echo would interpret backslashes) after `format_prefix`, printf format text.
std::string mark(std::string_view format_prefix, const std::string& n) {
  return "read -r bisectd_t" + n + " bisectd_x </proc/uptime; read -r bisectd_s" + n + " </proc/self/stat; printf '" +
         std::string(format_prefix) + "uptime=%s stat=%s\\n' \"$bisectd_t" + n + "\" \"$bisectd_s" + n + "\"";
}

// "uptime=12.34 stat=..." → the uptime; the stat is the rest of the line after "stat=".
void read_marker(std::string_view line, std::optional<double>& uptime, std::string& stat) {
  auto at = line.find(" stat=");
  stat = at == std::string_view::npos ? "" : std::string(line.substr(at + 6));
  auto fields = line.substr(0, at);
  auto u = fields.find("uptime=");
  if (u == std::string_view::npos) {
    return;
  }
  auto text = fields.substr(u + 7);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && ptr == text.data() + text.size()) {
    uptime = value;
  }
}

// Calls fn(line, newline) for each line of `text` (`line` without its '\n', `newline` whether it had one); stops
// early when fn returns false, returning where the next line would start.
template <typename Fn> std::size_t each_line(std::string_view text, Fn fn) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    bool newline = end != std::string_view::npos;
    auto line = text.substr(pos, newline ? end - pos : std::string_view::npos);
    pos = newline ? end + 1 : text.size();
    if (!fn(line, newline)) {
      break;
    }
  }
  return pos;
}

} // namespace

Result<std::string> monitored_run_command(const std::vector<std::string>& argv,
                                          const std::map<std::string, std::string>& env, const std::string& cwd,
                                          const std::set<std::string>& monitors, const RunSpec::Perf& perf) {
  BISECTD_TRY_ASSIGN(auto plain, remote_run_command(argv, env, cwd));
  if (monitors.empty() && !perf.any()) {
    return plain;
  }
  BISECTD_TRY_ASSIGN(auto dir, shell_join({cwd}));
  BISECTD_TRY_ASSIGN(auto command, remote_env_command(argv, env));
  std::vector<std::string> before{"bisectd_proc", "before"}, after{"bisectd_proc", "after"};
  for (const auto& file : monitors::proc_files(monitors)) {
    before.push_back(file);
    after.push_back(file);
  }
  BISECTD_TRY_ASSIGN(auto snapshot_before, shell_join(before));
  BISECTD_TRY_ASSIGN(auto snapshot_after, shell_join(after));
  // perf's files go to a directory of their own, removed after the run; without one the run goes without perf.
  std::string perf_try = "bisectd_pd= bisectd_pstat= bisectd_pprofile=";
  if (perf.any()) {
    perf_try += "; bisectd_pd=$(mktemp -d 2>/dev/null) && bisectd_perf_try \"$bisectd_pd\"" +
                std::string(perf.stat ? " stat" : "") + (perf.profile ? " profile" : "");
  }
  return std::string(proc_block_function()) + "\n" + std::string(perf_block_functions()) + "cd " + dir + " && { " +
         perf_try + "; " + snapshot_before + "; " + mark(k_begin, "0") + "; bisectd_perf_run \"$bisectd_pd\" " +
         command + "; bisectd_rc=$?; " + mark("\\n" + k_end.substr(1), "1") + "; " + snapshot_after +
         "; bisectd_perf_blocks \"$bisectd_pd\"; [ -z \"$bisectd_pd\" ] || rm -rf \"$bisectd_pd\"; exit "
         "\"$bisectd_rc\"; }";
}

MonitoredRun parse_monitored_run(std::string_view text) {
  MonitoredRun run;
  RunBlockReader blocks;
  bool begun = false;
  auto body = each_line(text, [&](std::string_view line, bool newline) {
    if (base::starts_with(line, k_begin)) {
      read_marker(line.substr(k_begin.size()), run.seconds, run.stat_before);
      begun = true;
      return false;
    }
    if (!blocks.take(line, &run.before, nullptr)) {
      run.output += std::string(line) + (newline ? "\n" : "");
    }
    return true;
  });
  if (!begun) {
    return run;
  }
  auto rest = text.substr(body);
  auto end = rest.rfind(k_end);
  if (end == std::string_view::npos) {
    run.output = std::string(rest);
    run.seconds.reset();
    return run;
  }
  run.output = std::string(rest.substr(0, end));
  run.ended = true;
  auto started = run.seconds;
  run.seconds.reset();
  std::optional<double> ended;
  RunBlockReader after;
  bool first = true;
  each_line(rest.substr(end + 1), [&](std::string_view line, bool /*newline*/) {
    if (first) {
      read_marker(line.substr(k_end.size() - 1), ended, run.stat_after);
      first = false;
    } else {
      after.take(line, nullptr, &run.after, &run.perf);
    }
    return true;
  });
  if (started && ended && *ended >= *started) {
    run.seconds = *ended - *started;
  }
  return run;
}

std::map<std::string, double> monitored_run_metrics(const std::set<std::string>& monitors, const RunSpec::Perf& perf,
                                                    const MonitoredRun& run, double host_seconds) {
  double elapsed = run.seconds.value_or(host_seconds);
  auto out = monitors::system_metrics(monitors, run.before, run.after, elapsed);
  out.merge(perf_metrics(perf, run.perf, elapsed));
  out.merge(monitors::waited_time_metrics(monitors, run.stat_before, run.stat_after, elapsed));
  return out;
}

} // namespace bisectd::lab
