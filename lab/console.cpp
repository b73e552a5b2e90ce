// Console log parsing for the QEMU backend. Kernel messages are recognised by their printk timestamp
// ("[    1.234567] ") when CONFIG_PRINTK_TIME is on, and crash lines also without it, at line start.

#include "lab/console.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "lab/metrics.hpp"
#include "lab/run_blocks.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <cctype>
#include <charconv>
#include <optional>

namespace bisectd::lab {

namespace {

// Line starts (after the printk timestamp) that mean the kernel crashed or is about to.
constexpr std::array<std::string_view, 8> k_crash_starts{
  "Kernel panic - not syncing", "Oops:",        "BUG: ",          "kernel BUG at",
  "general protection fault",   "double fault", "Kernel Offset:", "---[ end Kernel panic"};
constexpr std::string_view k_banner = "Linux version ";

// "[    1.234567] rest" → "rest"; other lines unchanged. Sets `is_kernel` when a timestamp was found.
std::string_view strip_printk_time(std::string_view line, bool& is_kernel) {
  is_kernel = false;
  if (line.size() < 3 || line.front() != '[') {
    return line;
  }
  auto close = line.find(']');
  if (close == std::string_view::npos) {
    return line;
  }
  for (char c : base::trim(line.substr(1, close - 1))) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) {
      return line;
    }
  }
  is_kernel = true;
  return base::trim(line.substr(close + 1));
}

// The value of `key=` in a marker line's fields, if any.
std::optional<std::string> field(std::string_view line, std::string_view key) {
  for (const auto& part : base::split(line, ' ')) {
    if (base::starts_with(part, key) && part.size() > key.size() && part[key.size()] == '=') {
      return part.substr(key.size() + 1);
    }
  }
  return std::nullopt;
}

double to_double(const std::optional<std::string>& text) {
  double value = 0;
  if (text) {
    std::from_chars(text->data(), text->data() + text->size(), value);
  }
  return value;
}

// The guest prints the exit status; anything but a whole number in int's range ("rc=1e30") is unknown (-1), never
// a float-to-int overflow.
int to_exit_code(const std::optional<std::string>& text) {
  int value = -1;
  if (!text) {
    return -1;
  }
  auto end = text->data() + text->size();
  auto [stop, ec] = std::from_chars(text->data(), end, value);
  return ec == std::errc() && stop == end ? value : -1;
}

void end_run(ConsoleLog& log, std::string_view line) {
  if (log.runs.empty()) {
    return;
  }
  auto& run = log.runs.back();
  run.ended = true;
  auto rc = field(line, "rc");
  run.exit_code = to_exit_code(rc);
  run.seconds = to_double(field(line, "end")) - to_double(field(line, "start"));
}

// " before <stat>" or " after <stat>" of the current run.
void take_stat(ConsoleLog& log, std::string_view rest) {
  if (log.runs.empty()) {
    return;
  }
  auto& run = log.runs.back();
  rest = base::trim(rest);
  for (auto [side, target] : {std::pair{std::string_view("before "), &run.stat_before},
                              std::pair{std::string_view("after "), &run.stat_after}}) {
    if (base::starts_with(rest, side)) {
      *target = std::string(rest.substr(side.size()));
    }
  }
}

void note_crash(ConsoleLog& log, std::string_view text, int& banners) {
  if (base::starts_with(text, k_banner) && ++banners == 2 && log.crash.empty()) {
    log.crash = "the kernel restarted (triple fault?): a second '" + std::string(k_banner) + "' banner";
  }
  for (auto start : k_crash_starts) {
    if (log.crash.empty() && base::starts_with(text, start)) {
      log.crash = std::string(text.substr(0, 200));
    }
  }
}

} // namespace

ConsoleLog parse_console(std::string_view text) {
  ConsoleLog log;
  int banners = 0;
  bool in_run = false;
  RunBlockReader blocks;
  for (const auto& raw : base::split_lines(text)) {
    bool is_kernel = false;
    auto line = strip_printk_time(raw, is_kernel);
    note_crash(log, line, banners);
    if (is_kernel) {
      continue;
    }
    auto* current = log.runs.empty() ? nullptr : &log.runs.back();
    if (blocks.take(line, current != nullptr ? &current->before : nullptr,
                    current != nullptr ? &current->after : nullptr, current != nullptr ? &current->perf : nullptr)) {
      continue;
    }
    auto trimmed = base::trim(line);
    if (base::starts_with(trimmed, k_boot_marker)) {
      log.booted = true;
      log.release = field(trimmed, "release").value_or("");
    } else if (base::starts_with(trimmed, k_run_begin_marker)) {
      ConsoleRun run;
      run.index = static_cast<int>(log.runs.size());
      log.runs.push_back(std::move(run));
      in_run = true;
    } else if (base::starts_with(trimmed, k_run_end_marker)) {
      end_run(log, trimmed);
      in_run = false;
    } else if (base::starts_with(trimmed, k_stat_marker)) {
      take_stat(log, trimmed.substr(k_stat_marker.size()));
    } else if (base::starts_with(trimmed, k_done_marker)) {
      log.done = true;
    } else if (in_run) {
      log.runs.back().output += std::string(line) + "\n";
    }
  }
  return log;
}

std::string boot_failure(const ConsoleLog& log, std::string_view expected_release) {
  if (!log.crash.empty()) {
    return "kernel crashed: " + log.crash;
  }
  if (!log.booted) {
    return "no boot marker (" + std::string(k_boot_marker) + ") on the console";
  }
  if (!expected_release.empty() && log.release != expected_release) {
    return "booted kernel is '" + log.release + "', expected '" + std::string(expected_release) + "'";
  }
  return "";
}

RunResult run_result(const ConsoleRun& run, const VisitRequest& request, const std::string& boot_id,
                     const char* backend) {
  RunResult result;
  result.index = run.index;
  result.seconds = run.seconds;
  judge_run(result, run.output, request.run,
            !run.ended ? "no end marker" : run.exit_code != 0 ? "benchmark exit " + std::to_string(run.exit_code) : "");
  judge_guest_disk_full(result, run.ended && run.exit_code != 0, run.output);
  // /init runs the benchmark under `timeout -s KILL`: 137 is its limit (or the OOM killer's); no end marker, a guest
  // that stopped answering.
  constexpr int k_killed_by_timeout = 128 + 9;
  result.timed_out = !result.ok && (!run.ended || run.exit_code == k_killed_by_timeout);
  // The benchmark's own metrics win a name clash: a job's primary metric is never a monitor's.
  add_collected_metrics(result, monitors::system_metrics(request.run.monitors, run.before, run.after, run.seconds));
  add_collected_metrics(result, perf_metrics(request.run.perf, run.perf, run.seconds));
  add_collected_metrics(
    result, monitors::waited_time_metrics(request.run.monitors, run.stat_before, run.stat_after, run.seconds));
  result.log_path = request.log_dir / (boot_id + "-run" + std::to_string(run.index) + ".log");
  if (auto written = base::write_file_atomic(result.log_path, run.output + result.log_note); !written) {
    spdlog::warn("{}: {}", backend, written.error().message);
  }
  return result;
}

} // namespace bisectd::lab
