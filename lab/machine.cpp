#include "lab/machine.hpp"

#include "base/clock.hpp"
#include "base/fd.hpp"
#include "base/strings.hpp"
#include "monitors/monitors.hpp"

#include <atomic>

namespace bisectd::lab {

void judge_disk_full(RunResult& run, const base::ExitStatus& status, std::string_view output) {
  if (run.ok) {
    return;
  }
  if (status.output_error && status.output_error->code == ErrorCode::infra) {
    run.disk_full = true;
    run.error = "disk full: run log " + run.log_path.string() + ": " + status.output_error->message + "; " + run.error;
  } else {
    judge_guest_disk_full(run, !status.ok(), output);
  }
}

void judge_guest_disk_full(RunResult& run, bool benchmark_failed, std::string_view output) {
  if (!run.ok && benchmark_failed && base::mentions_disk_full(output)) {
    run.disk_full = true;
    run.error = "disk full: the benchmark said so; " + run.error;
  }
}

std::string_view to_string(VisitOutcome outcome) {
  switch (outcome) {
  case VisitOutcome::ok: return "ok";
  case VisitOutcome::boot_failed: return "boot_failed";
  case VisitOutcome::infra: return "infra";
  case VisitOutcome::cancelled: return "cancelled";
  }
  return "?";
}

std::vector<std::string> collected_families(const RunSpec& run) {
  std::vector<std::string> out;
  for (const auto& name : monitors::known_monitors()) {
    if (run.monitors.contains(name)) {
      out.push_back(name);
    }
  }
  if (run.perf.stat) {
    out.emplace_back("perf-stat");
  }
  if (run.perf.profile) {
    out.emplace_back("perf-profile");
  }
  return out;
}

std::vector<CheckLine> Machine::check(const CheckOptions&) {
  return {{"backend", true, true, spec().backend + ": no check of its own; the first visit finds out"}};
}

std::chrono::seconds run_overhead(const RunSpec& run) { return std::chrono::seconds(run.perf.any() ? 30 : 10); }

std::string new_boot_id(const std::string& machine) {
  // Process-wide, so two machines (or a re-created one) never hand out the same boot id.
  static std::atomic<unsigned long> counter{0};
  return base::file_name_safe(machine.empty() ? "machine" : machine) + "-" + std::to_string(base::unix_now_ms()) + "-" +
         std::to_string(counter.fetch_add(1));
}

} // namespace bisectd::lab
