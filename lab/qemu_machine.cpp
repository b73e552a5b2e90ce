// QemuMachine::visit: initramfs → QEMU with a boot watchdog → console verdict → runs.

#include "lab/qemu_machine.hpp"

#include "base/clock.hpp"
#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "lab/initramfs.hpp"
#include "lab/metrics.hpp"

#include <spdlog/spdlog.h>

#include <thread>

namespace bisectd::lab {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto k_watch_interval = 200ms;

constexpr auto k_kvm_probe_time = 20s;

enum class StopReason { none, cancelled, no_marker, kvm_stuck };

// Set when an `auto` boot under KVM printed nothing: some hosts (nested virtualisation) expose a
// /dev/kvm that opens fine but never runs the guest kernel. Later `auto` boots use TCG.
std::atomic<bool> g_kvm_broken{false};

Status check_request(const VisitRequest& request) {
  if (request.log_dir.empty()) {
    return make_error(ErrorCode::invalid_input, "visit: no log_dir");
  }
  std::error_code ec;
  if (!fs::is_regular_file(request.artifact_dir / "bzImage", ec)) {
    return make_error(ErrorCode::invalid_input, "visit: no bzImage in " + request.artifact_dir.string());
  }
  return {};
}

std::chrono::milliseconds visit_timeout(const QemuSettings& settings, const VisitRequest& request) {
  return settings.boot_timeout + request.runs * (request.run.timeout + run_overhead(request.run)) + 30s;
}

// Raises `stop` when the caller cancels, or when the boot marker is not on the console in time.
// With `kvm_probe`, also when the kernel has printed nothing after k_kvm_probe_time.
void watch_boot(std::stop_token token, const VisitRequest& request, const fs::path& console,
                std::chrono::seconds boot_timeout, bool kvm_probe, std::atomic<bool>& stop,
                std::atomic<StopReason>& reason) {
  auto start = std::chrono::steady_clock::now();
  bool booted = false;
  while (!token.stop_requested()) {
    std::this_thread::sleep_for(k_watch_interval);
    if (request.cancel != nullptr && request.cancel->load()) {
      reason = StopReason::cancelled;
      stop = true;
      return;
    }
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (kvm_probe && elapsed > k_kvm_probe_time) {
      kvm_probe = false;
      if (base::read_file(console).value_or("").find("Linux version") == std::string::npos) {
        reason = StopReason::kvm_stuck;
        stop = true;
        return;
      }
    }
    if (!booted && elapsed > boot_timeout) {
      booted = parse_console(base::read_file(console).value_or("")).booted;
      if (!booted) {
        reason = StopReason::no_marker;
        stop = true;
        return;
      }
    }
  }
}

VisitResult failed(VisitOutcome outcome, std::string message) {
  VisitResult result;
  result.outcome = outcome;
  result.message = std::move(message);
  return result;
}

} // namespace

VisitResult judge_boot(const ConsoleLog& console, const BootEnd& end, const VisitRequest& request) {
  auto failure = boot_failure(console, request.kernel_release);
  if (!console.crash.empty() || (console.booted && !failure.empty())) {
    return failed(VisitOutcome::boot_failed, failure);
  }
  if (!console.booted) {
    auto why = end.no_marker_timeout ? "within the boot timeout" : "before QEMU ended (" + end.exit + ")";
    return failed(VisitOutcome::boot_failed, failure + " " + why);
  }
  if (!console.done) {
    if (end.timed_out) {
      return failed(VisitOutcome::infra, "the visit timed out during run " + std::to_string(console.runs.size()));
    }
    return failed(VisitOutcome::boot_failed, "the machine stopped during run " + std::to_string(console.runs.size()) +
                                               " (reset or triple fault?; " + end.exit + ")");
  }
  return VisitResult{};
}

Result<std::unique_ptr<Machine>> QemuMachine::create(const MachineSpec& spec) {
  BISECTD_TRY_ASSIGN(auto settings, parse_qemu_settings(spec));
  if (!base::find_program(settings.qemu)) {
    return make_error(ErrorCode::not_found, "machine " + spec.name + ": " + settings.qemu +
                                              " not found (install the Debian package " + std::string(k_qemu_package) +
                                              ")");
  }
  return std::make_unique<QemuMachine>(spec, std::move(settings));
}

QemuMachine::QemuMachine(MachineSpec spec, QemuSettings settings)
    : m_spec(std::move(spec)), m_settings(std::move(settings)) {}

std::string QemuMachine::next_boot_id() const { return new_boot_id(m_spec.name); }

Status QemuMachine::prepare_initrd(const std::vector<CpioEntry>& job, const fs::path& initrd,
                                   const RunSpec& run) const {
  return write_bench_image(m_settings.busybox, m_settings.bench_dir, m_settings.cache_dir, job, initrd,
                           run.perf.any() ? m_settings.perf : fs::path());
}

bool QemuMachine::use_kvm() const {
  return m_settings.accel == "kvm" || (m_settings.accel == "auto" && !g_kvm_broken && kvm_usable());
}

Result<BootEnd> QemuMachine::boot(const VisitRequest& request, const fs::path& initrd, const fs::path& console,
                                  bool kvm) const {
  base::Command cmd;
  cmd.argv = qemu_argv(m_settings, m_spec, kvm, request.artifact_dir / "bzImage", initrd);
  cmd.stdout_path = console;
  cmd.stdout_limit = k_log_limit;
  cmd.stderr_to_stdout = true;
  cmd.timeout = visit_timeout(m_settings, request);
  std::atomic<bool> stop{false};
  std::atomic<StopReason> reason{StopReason::none};
  cmd.cancel = &stop;
  spdlog::debug("qemu {}: {}", m_spec.name, base::describe_argv(cmd.argv));
  bool kvm_probe = kvm && m_settings.accel == "auto";
  std::jthread watchdog(watch_boot, std::cref(request), console, m_settings.boot_timeout, kvm_probe, std::ref(stop),
                        std::ref(reason));
  auto status = base::run(cmd);
  watchdog.request_stop();
  watchdog.join();
  BootEnd end;
  if (!status) {
    if (status.error().code == ErrorCode::cancelled && reason == StopReason::no_marker) {
      end.no_marker_timeout = true;
      end.exit = "killed: no boot marker";
      return end;
    }
    if (status.error().code == ErrorCode::cancelled && reason == StopReason::kvm_stuck) {
      end.kvm_stuck = true;
      return end;
    }
    return std::unexpected(status.error());
  }
  end.timed_out = status->timed_out;
  end.exit = status->describe();
  return end;
}

Result<VisitResult> QemuMachine::visit(const VisitRequest& request) {
  BISECTD_TRY(check_request(request));
  BISECTD_TRY_ASSIGN(auto job, job_entries(request.run, request.runs));
  BISECTD_TRY(base::make_dirs(request.log_dir));
  auto boot_id = next_boot_id();
  auto console_path = request.log_dir / (boot_id + "-console.log");
  auto initrd = request.log_dir / (boot_id + "-initramfs.cpio.gz");
  VisitResult result;
  auto prepared = prepare_initrd(job, initrd, request.run);
  bool kvm = use_kvm();
  auto end = prepared ? boot(request, initrd, console_path, kvm) : Result<BootEnd>(std::unexpected(prepared.error()));
  if (end && end->kvm_stuck) {
    g_kvm_broken = true;
    spdlog::warn("qemu {}: no kernel output under KVM after {}s; using TCG from now on", m_spec.name,
                 k_kvm_probe_time.count());
    end = boot(request, initrd, console_path, false);
  }
  std::error_code ec;
  fs::remove(initrd, ec);
  if (!end) {
    result = failed(VisitOutcome::infra, "qemu " + m_spec.name + ": " + end.error().message);
  } else {
    auto console = parse_console(base::read_file(console_path).value_or(""));
    result = judge_boot(console, *end, request);
    for (const auto& run : result.outcome == VisitOutcome::ok ? console.runs : std::vector<ConsoleRun>{}) {
      result.runs.push_back(run_result(run, request, boot_id, "qemu"));
    }
  }
  result.boot_id = boot_id;
  result.console_log = console_path;
  spdlog::info("qemu {}: boot {} {} {}", m_spec.name, boot_id,
               result.outcome == VisitOutcome::ok ? "ok" : "failed:", result.message);
  return result;
}

} // namespace bisectd::lab
