#include "lab/local_machine.hpp"

#include "base/clock.hpp"
#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "lab/metrics.hpp"
#include "lab/proc_monitors.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::lab {

namespace {

namespace fs = std::filesystem;

Status check_request(const MachineSpec& spec, const VisitRequest& request) {
  auto fail = [&](const std::string& what) {
    return make_error(ErrorCode::invalid_input, "machine " + spec.name + ": " + what);
  };
  if (request.run.command.empty()) {
    return fail("run.command: empty");
  }
  if (request.runs < 1) {
    return fail("runs: must be at least 1 (got " + std::to_string(request.runs) + ")");
  }
  if (request.run.primary.empty()) {
    return fail("metrics.primary: empty");
  }
  if (request.artifact_dir.empty() || request.log_dir.empty()) {
    return fail("visit needs an artifact dir and a log dir");
  }
  return {};
}

base::Command make_command(const VisitRequest& request, const fs::path& log) {
  base::Command cmd;
  cmd.argv = request.run.command;
  // ./bench means the artifact, not something in PATH.
  if (cmd.argv[0].find('/') != std::string::npos && fs::path(cmd.argv[0]).is_relative()) {
    cmd.argv[0] = (request.artifact_dir / cmd.argv[0]).lexically_normal().string();
  }
  cmd.env = request.run.env;
  cmd.cwd = request.artifact_dir;
  cmd.timeout = request.run.timeout;
  cmd.stdout_path = log;
  cmd.stdout_limit = k_log_limit;
  cmd.stderr_to_stdout = true;
  cmd.cancel = request.cancel;
  cmd.sandbox = base::Sandbox{.writable = {}, .readable = {request.artifact_dir}};
  return cmd;
}

// Fills metrics/ok/error of a run that exited (in any way) from its log.
void judge_logged_run(const VisitRequest& request, const base::ExitStatus& status, RunResult& run) {
  auto output = base::read_file(run.log_path);
  if (!output) {
    run.error = "cannot read run log: " + output.error().message;
    judge_disk_full(run, status, "");
    return;
  }
  judge_run(run, *output, request.run, status.ok() ? "" : "benchmark " + status.describe());
  run.timed_out = !run.ok && status.timed_out;
  if (!run.log_note.empty()) {
    (void)base::append_file(run.log_path, run.log_note); // the run's log says what its metrics lost
  }
  judge_disk_full(run, status, *output);
}

} // namespace

Result<std::unique_ptr<Machine>> LocalMachine::create(const MachineSpec& spec) {
  if (!spec.settings.empty()) {
    const auto& [key, setting] = *spec.settings.begin();
    return make_error(ErrorCode::invalid_config,
                      (setting.where.empty() ? "machine " + spec.name + ": settings." + key : setting.where) +
                        ": backend 'local' takes no settings");
  }
  return std::make_unique<LocalMachine>(spec);
}

LocalMachine::LocalMachine(MachineSpec spec) : m_spec(std::move(spec)) {}

std::string LocalMachine::next_boot_id() const { return new_boot_id(m_spec.name); }

RunResult LocalMachine::run_once(const VisitRequest& request, const std::string& boot_id, int index, bool& cancelled) {
  RunResult run;
  run.index = index;
  run.log_path = request.log_dir / (boot_id + "-run" + std::to_string(index) + ".log");
  auto cmd = make_command(request, run.log_path);
  spdlog::debug("machine {}: run {} of {}: {} in {}", m_spec.name, index + 1, request.runs,
                base::describe_argv(cmd.argv), request.artifact_dir.string());
  // The snapshots are taken right around the run, so what they count is this run plus whatever else the host
  // did meanwhile (as LKP's monitors do). Reading them happens outside the child's lifetime, so the benchmark's
  // own timing never includes it (a pair of all five files measured 0.2-0.4 ms on a busy 2-core host).
  auto before = read_proc_snapshot(request.run.monitors);
  auto status = base::run(cmd);
  auto after = read_proc_snapshot(request.run.monitors);
  if (!status) {
    cancelled = status.error().code == ErrorCode::cancelled;
    run.error = status.error().message;
    return run;
  }
  run.seconds = std::chrono::duration<double>(status->duration).count();
  judge_logged_run(request, *status, run);
  // The benchmark's own metrics win a name clash: a monitor never overwrites what the run printed.
  if (auto note = add_collected_metrics(run, run_monitor_metrics(request.run.monitors, before, after, *status));
      !note.empty()) {
    (void)base::append_file(run.log_path, note);
  }
  spdlog::debug("machine {}: run {}: {} after {:.2f}s{}", m_spec.name, index + 1, status->describe(), run.seconds,
                run.ok ? "" : ": " + run.error);
  return run;
}

Result<VisitResult> LocalMachine::visit(const VisitRequest& request) {
  BISECTD_TRY(check_request(m_spec, request));
  VisitResult result;
  result.boot_id = next_boot_id();
  std::error_code ec;
  if (!fs::is_directory(request.artifact_dir, ec)) {
    result.outcome = VisitOutcome::infra;
    result.message = "machine " + m_spec.name + ": artifact dir " + request.artifact_dir.string() + " missing";
    return result;
  }
  if (auto made = base::make_dirs(request.log_dir); !made) {
    result.outcome = VisitOutcome::infra;
    result.message = "machine " + m_spec.name + ": log dir: " + made.error().message;
    return result;
  }
  for (int i = 0; i < request.runs; ++i) {
    bool cancelled = request.cancel != nullptr && request.cancel->load();
    RunResult run;
    if (!cancelled) {
      run = run_once(request, result.boot_id, i, cancelled);
    }
    if (cancelled) {
      result.outcome = VisitOutcome::infra;
      result.message = "machine " + m_spec.name + ": cancelled after " + std::to_string(i) + " of " +
                       std::to_string(request.runs) + " runs";
      return result;
    }
    result.runs.push_back(std::move(run));
  }
  return result;
}

} // namespace bisectd::lab
