// SshMachine::visit: lock → console → probe → install → wait → verify → runs → judge → return (ssh_machine.hpp).

#include "lab/ssh_machine.hpp"

#include "base/clock.hpp"
#include "base/dir_lock.hpp"
#include "base/fs.hpp"
#include "base/strings.hpp"
#include "lab/console.hpp"
#include "lab/metrics.hpp"
#include "lab/ssh_host.hpp"
#include "lab/ssh_monitors.hpp"

#include <spdlog/spdlog.h>

#include <thread>

namespace bisectd::lab {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto k_poll_interval = 2s;
// While a box reboots, a port forward or a console server may accept the TCP connection and then say nothing:
// each probe gives up after this and the next one follows, so a box that is back is seen within seconds.
constexpr auto k_boot_probe_connect = 3s;
constexpr std::string_view k_memory_separator = "BISECTD-MEMINFO";

bool cancelled(const VisitRequest& request) { return request.cancel != nullptr && request.cancel->load(); }

// What the console says killed the kernel (qemu's rules: panic, oops, BUG, ...), "" when nothing. A second
// "Linux version" banner alone is not counted: a real box also restarts for a power cycle or a watchdog, so a
// restart without a crash line is no evidence against the kernel.
std::string crash_on(const std::string& console) {
  auto crash = parse_console(console).crash;
  return base::starts_with(crash, "the kernel restarted") ? "" : crash;
}

Status check_request(const SshSettings& settings, const VisitRequest& request) {
  auto fail = [](const std::string& what) { return make_error(ErrorCode::invalid_input, "visit: " + what); };
  if (request.run.command.empty()) {
    return fail("run.command: empty");
  }
  if (request.runs < 1) {
    return fail("runs must be at least 1");
  }
  if (request.log_dir.empty() || request.artifact_dir.empty()) {
    return fail("needs an artifact dir and a log dir");
  }
  std::error_code ec;
  if (settings.install != SshInstall::none) {
    if (!fs::is_regular_file(request.artifact_dir / "bzImage", ec)) {
      return fail("no bzImage in " + request.artifact_dir.string() + " (install: kexec/reboot boots a kernel)");
    }
    if (request.kernel_release.empty()) {
      return fail("a kernel install needs the build's kernel release");
    }
  }
  BISECTD_TRY(remote_run_command(request.run.command, request.run.env, "/"));
  return {};
}

} // namespace

struct SshMachine::Visit {
  const VisitRequest& request;
  VisitResult result;
  ConsoleCapture* console = nullptr;
  std::string remote_dir;

  void fail(VisitOutcome outcome, std::string message) {
    result.outcome = outcome;
    result.message = std::move(message);
  }
  // The verdict when the box went away: the console's crash line makes it boot_failed, else infra.
  void lost(const std::string& what) {
    auto crash = crash_on(console->text());
    if (!crash.empty()) {
      fail(VisitOutcome::boot_failed, "kernel crashed: " + crash + " (" + what + ")");
    } else {
      fail(VisitOutcome::infra, what);
    }
  }
};

Result<std::unique_ptr<Machine>> SshMachine::create(const MachineSpec& spec) {
  BISECTD_TRY_ASSIGN(auto settings, parse_ssh_settings(spec));
  for (const auto* program : {&settings.ssh.front(), &settings.scp.front()}) {
    if (!base::find_program(*program)) {
      return make_error(ErrorCode::not_found, "machine " + spec.name + ": " + *program +
                                                " not found (install the Debian package openssh-client)");
    }
  }
  return std::make_unique<SshMachine>(spec, std::move(settings), real_host_commands());
}

SshMachine::SshMachine(MachineSpec spec, SshSettings settings, std::shared_ptr<HostCommands> host)
    : m_spec(std::move(spec)), m_settings(std::move(settings)), m_host(std::move(host)) {}

std::string SshMachine::describe() {
  if (!m_spec.description.empty()) {
    return m_spec.description;
  }
  std::lock_guard lock(m_description_mutex);
  return m_description;
}

Result<base::ExitStatus> SshMachine::remote(const std::string& line, std::chrono::seconds timeout,
                                            const fs::path& output) {
  base::Command cmd;
  cmd.argv = ssh_argv(m_settings, line, std::min(m_settings.ssh_timeout, timeout));
  cmd.timeout = timeout;
  if (!output.empty()) {
    cmd.stdout_path = output;
    cmd.stderr_path = output.string() + ".ssh-err";
  }
  auto status = m_host->run(cmd);
  if (status && !output.empty()) {
    status->err = base::read_file(cmd.stderr_path).value_or("");
    std::error_code ec;
    fs::remove(cmd.stderr_path, ec);
  }
  return status;
}

Result<BoxState> SshMachine::probe(std::chrono::seconds connect) {
  // The key exchange and the probe itself are slow on a box that has just booted: they get their own time.
  BISECTD_TRY_ASSIGN(auto status, remote(std::string(k_probe_command), connect + 15s));
  if (!status.ok()) {
    return make_error(ErrorCode::infra, ssh_failure(status));
  }
  return parse_probe(status.out);
}

void SshMachine::read_description() {
  {
    std::lock_guard lock(m_description_mutex);
    if (!m_spec.description.empty() || !m_description.empty()) {
      return;
    }
  }
  auto status = remote("cat /proc/cpuinfo; echo " + std::string(k_memory_separator) + "; cat /proc/meminfo",
                       m_settings.ssh_timeout);
  if (!status || !status->ok()) {
    return;
  }
  auto split = status->out.find(k_memory_separator);
  auto text = describe_box(status->out.substr(0, split),
                           split == std::string::npos ? "" : status->out.substr(split + k_memory_separator.size()));
  std::lock_guard lock(m_description_mutex);
  m_description = text;
  spdlog::info("ssh {}: the box says it is {}", m_spec.name, text.empty() ? "(nothing)" : text);
}

std::optional<BoxState> SshMachine::wait_for_new_boot(const std::string& old, const VisitRequest& request) {
  auto deadline = m_host->now() + m_settings.boot_timeout;
  auto connect = std::min<std::chrono::seconds>(m_settings.ssh_timeout, k_boot_probe_connect);
  while (m_host->now() < deadline && !cancelled(request)) {
    auto state = probe(connect);
    if (state && state->boot_id != old) {
      return *state;
    }
    m_host->sleep(k_poll_interval);
  }
  return std::nullopt;
}

std::string SshMachine::power_cycle_and_wait(const std::string& old, const VisitRequest& request) {
  if (m_settings.power_cycle.empty()) {
    return "no power_cycle configured";
  }
  spdlog::warn("ssh {}: power cycling: {}", m_spec.name, base::describe_argv(m_settings.power_cycle));
  base::Command cmd;
  cmd.argv = m_settings.power_cycle;
  cmd.timeout = m_settings.ssh_timeout * 2;
  cmd.leave_detached = true; // a PDU stand-in may boot a VM that outlives the command
  cmd.stderr_to_stdout = true;
  auto status = m_host->run(cmd);
  if (!status || !status->ok()) {
    return "power_cycle failed: " +
           (status ? status->describe() + " " + std::string(base::trim(status->out)) : status.error().message);
  }
  if (!wait_for_new_boot(old, request)) {
    return "the box did not answer within " + std::to_string(m_settings.boot_timeout.count()) + "s" +
           " after the power cycle";
  }
  return "";
}

void SshMachine::return_to_default(const BoxState& test_boot, const VisitRequest& request) {
  auto line = shell_join(m_settings.return_command);
  if (line) {
    (void)remote(detached_line(*line), m_settings.ssh_timeout);
  }
  if (wait_for_new_boot(test_boot.boot_id, request)) {
    return;
  }
  auto why = power_cycle_and_wait(test_boot.boot_id, request);
  if (!why.empty()) {
    spdlog::error("ssh {}: the box did not come back to its default kernel: {}", m_spec.name, why);
  }
}

void SshMachine::run_all(Visit& visit, const std::string& cwd, const BoxState& boot) {
  const auto& request = visit.request;
  auto line = monitored_run_command(request.run.command, request.run.env, cwd, request.run.monitors, request.run.perf);
  if (!line) {
    visit.fail(VisitOutcome::infra, line.error().message);
    return;
  }
  for (int i = 0; i < request.runs; ++i) {
    if (cancelled(request)) {
      visit.fail(VisitOutcome::infra,
                 "cancelled after " + std::to_string(i) + " of " + std::to_string(request.runs) + " runs");
      return;
    }
    RunResult run;
    run.index = i;
    run.log_path = request.log_dir / (visit.result.boot_id + "-run" + std::to_string(i) + ".log");
    auto started = m_host->now();
    auto status = remote(*line, request.run.timeout + m_settings.ssh_timeout, run.log_path);
    run.seconds = std::chrono::duration<double>(m_host->now() - started).count();
    if (!status) {
      visit.fail(VisitOutcome::infra, "run " + std::to_string(i) + ": " + status.error().message);
      return;
    }
    if (status->code == 255 || status->timed_out) {
      // ssh's own failure (or a benchmark that exits 255): ask the box what happened.
      auto now = probe(m_settings.ssh_timeout);
      if (!now) {
        visit.lost("ssh connection lost during run " + std::to_string(i) + ": " + now.error().message);
        return;
      }
      if (now->boot_id != boot.boot_id) {
        visit.lost("the box rebooted during run " + std::to_string(i));
        return;
      }
    }
    auto output = base::read_file(run.log_path).value_or("");
    std::map<std::string, double> monitored;
    if (!request.run.monitors.empty() || request.run.perf.any()) {
      auto parsed = parse_monitored_run(output);
      monitored = monitored_run_metrics(request.run.monitors, request.run.perf, parsed, run.seconds);
      output = std::move(parsed.output);
      (void)base::write_file_atomic(run.log_path, output); // the log keeps the benchmark's output, as elsewhere
    }
    // The benchmark's stderr (and ssh's) follows its stdout in the run log, as `local` merges them.
    if (!status->err.empty()) {
      (void)base::append_file(run.log_path, status->err);
      output += status->err;
    }
    judge_run(run, output, request.run,
              status->ok() ? ""
                           : "benchmark " + status->describe() +
                               (status->err.empty() ? "" : ": " + std::string(base::trim(status->err)).substr(0, 200)));
    run.timed_out = !run.ok && status->timed_out;
    judge_disk_full(run, *status, output);
    add_collected_metrics(run, std::move(monitored)); // the benchmark's own metrics win a name clash
    if (!run.log_note.empty()) {
      (void)base::append_file(run.log_path, run.log_note);
    }
    spdlog::debug("ssh {}: run {} of {}: {}", m_spec.name, i + 1, request.runs, run.ok ? "ok" : run.error);
    visit.result.runs.push_back(std::move(run));
  }
  // Every sample must come from one boot of the build's kernel.
  auto after = probe(m_settings.ssh_timeout);
  if (!after) {
    visit.lost("ssh connection lost after the runs: " + after.error().message);
  } else if (after->boot_id != boot.boot_id) {
    visit.lost("the box rebooted during the runs");
  }
}

Result<VisitResult> SshMachine::visit(const VisitRequest& request) {
  BISECTD_TRY(check_request(m_settings, request));
  std::lock_guard lock(m_visit_mutex);
  // A lock file per box on this host: two daemons (or a test tool) never drive one box at once.
  auto lock_dir = base::default_cache_dir() / "ssh-locks";
  BISECTD_TRY(base::make_dirs(lock_dir));
  auto box_lock = base::DirLock::acquire(
    lock_dir, base::file_name_safe(m_settings.host + "-" + std::to_string(m_settings.port)) + ".lock");
  if (!box_lock) {
    VisitResult busy;
    busy.outcome = VisitOutcome::infra;
    busy.message = "ssh " + m_spec.name + ": the box is locked by another process on this host";
    return busy;
  }
  auto started = std::chrono::steady_clock::now();
  auto result = visit_locked(request);
  if (result) {
    spdlog::info("ssh {}: visit {} {} after {:.1f}s{}", m_spec.name, result->boot_id,
                 result->outcome == VisitOutcome::ok ? "ok" : "failed",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                 result->message.empty() ? "" : ": " + result->message);
  }
  return result;
}

Result<VisitResult> SshMachine::visit_locked(const VisitRequest& request) {
  BISECTD_TRY(base::make_dirs(request.log_dir));
  Visit visit{request, {}, nullptr, {}};
  visit.result.boot_id = new_boot_id(m_spec.name);
  visit.result.console_log = request.log_dir / (visit.result.boot_id + "-console.log");
  ConsoleCapture console(*m_host, m_settings.console, visit.result.console_log);
  visit.console = &console;
  const std::string prefix = "ssh " + m_spec.name + ": ";
  auto finish = [&](VisitResult result) -> Result<VisitResult> {
    console.stop();
    if (result.outcome != VisitOutcome::ok) {
      result.runs.clear(); // no sample from a visit that failed
      result.message = prefix + result.message;
    }
    return result;
  };

  auto box = probe(m_settings.ssh_timeout);
  if (!box) {
    visit.fail(VisitOutcome::infra, box.error().message);
    return finish(std::move(visit.result));
  }
  read_description();
  visit.remote_dir = m_settings.kernel_dir + "/" + visit.result.boot_id;
  auto copy_timeout = std::max<std::chrono::seconds>(m_settings.ssh_timeout * 4, 120s);
  auto mkdir = remote("mkdir -p " + base::shell_quote(m_settings.kernel_dir), m_settings.ssh_timeout);
  if (!mkdir || !mkdir->ok()) {
    visit.fail(VisitOutcome::infra, "mkdir " + m_settings.kernel_dir +
                                      " on the box: " + (mkdir ? ssh_failure(*mkdir) : mkdir.error().message));
    return finish(std::move(visit.result));
  }
  auto cleanup = [&] { (void)remote("rm -rf " + base::shell_quote(visit.remote_dir), m_settings.ssh_timeout); };
  auto copy = [&](const std::vector<std::string>& local, const std::string& to, bool recursive) {
    return copy_to_box(local, to, recursive, copy_timeout);
  };

  if (m_settings.install == SshInstall::none) {
    if (auto why = copy({request.artifact_dir.string()}, visit.remote_dir, true); !why.empty()) {
      cleanup();
      visit.fail(VisitOutcome::infra, "copying the artifacts to the box failed: " + why);
      return finish(std::move(visit.result));
    }
    run_all(visit, visit.remote_dir, *box);
    cleanup();
    if (visit.result.outcome == VisitOutcome::ok) {
      if (auto crash = crash_on(console.text()); !crash.empty()) {
        visit.fail(VisitOutcome::boot_failed, "kernel crashed during the visit: " + crash);
      }
    }
    return finish(std::move(visit.result));
  }

  // A kernel install: copy, install, boot, verify, run, judge, return.
  std::vector<std::string> files{(request.artifact_dir / "bzImage").string()};
  std::error_code ec;
  bool modules = fs::is_regular_file(request.artifact_dir / "modules.tar.gz", ec);
  if (modules) {
    files.push_back((request.artifact_dir / "modules.tar.gz").string());
  }
  if (m_settings.initrd == SshInitrd::lab) {
    files.push_back(m_settings.initrd_file.string());
  }
  auto mkdir_visit = remote("mkdir -p " + base::shell_quote(visit.remote_dir), m_settings.ssh_timeout);
  std::string why = !mkdir_visit ? mkdir_visit.error().message : mkdir_visit->ok() ? "" : ssh_failure(*mkdir_visit);
  if (why.empty()) {
    why = copy(files, visit.remote_dir + "/", false);
  }
  if (why.empty() && modules) {
    auto unpacked =
      remote("tar -xzf " + base::shell_quote(visit.remote_dir + "/modules.tar.gz") + " -C /", copy_timeout);
    why = !unpacked        ? unpacked.error().message
          : unpacked->ok() ? ""
                           : "unpacking the modules: " + ssh_failure(*unpacked);
  }
  if (!why.empty()) {
    cleanup();
    visit.fail(VisitOutcome::infra, "copying the kernel to the box failed: " + why);
    return finish(std::move(visit.result));
  }
  auto kernel = visit.remote_dir + "/bzImage";
  std::string install_line;
  if (m_settings.install == SshInstall::kexec) {
    std::vector<std::string> load{"kexec", "-l", kernel};
    if (m_settings.initrd == SshInitrd::lab) {
      load.push_back("--initrd=" + visit.remote_dir + "/" + m_settings.initrd_file.filename().string());
    } else if (m_settings.initrd == SshInitrd::box) {
      load.push_back("--initrd=" +
                     (m_settings.initrd_path.empty() ? "/boot/initrd.img-" + box->release : m_settings.initrd_path));
    }
    auto cmdline = m_settings.cmdline.empty() ? kexec_cmdline(box->cmdline, visit.result.boot_id)
                                              : m_settings.cmdline + " bisectd.boot=" + visit.result.boot_id;
    load.push_back("--command-line=" + cmdline);
    auto loaded = remote(*shell_join(load), m_settings.ssh_timeout * 2);
    if (!loaded || !loaded->ok()) {
      cleanup();
      visit.fail(VisitOutcome::infra,
                 "kexec refused the kernel: " + (loaded ? ssh_failure(*loaded) : loaded.error().message));
      return finish(std::move(visit.result));
    }
    install_line = "sync; kexec -e";
  } else {
    auto placed = remote("cp " + base::shell_quote(kernel) + " " +
                           base::shell_quote(m_settings.kernel_dir + "/vmlinuz-bisectd") + " && sync",
                         m_settings.ssh_timeout);
    if (!placed || !placed->ok()) {
      cleanup();
      visit.fail(VisitOutcome::infra,
                 "placing the kernel failed: " + (placed ? ssh_failure(*placed) : placed.error().message));
      return finish(std::move(visit.result));
    }
    install_line = "sync; " + *shell_join(m_settings.reboot_command);
  }
  spdlog::info("ssh {}: booting {} ({})", m_spec.name, request.kernel_release,
               m_settings.install == SshInstall::kexec ? "kexec" : "reboot");
  auto boot_started = m_host->now();
  // In the background, so that ssh returns before the box goes down.
  (void)remote(detached_line(install_line), m_settings.ssh_timeout);
  auto booted = wait_for_new_boot(box->boot_id, request);
  if (!booted) {
    auto crash = crash_on(console.text());
    auto after = power_cycle_and_wait(box->boot_id, request);
    auto what = "no ssh within " + std::to_string(m_settings.boot_timeout.count()) + "s" + " of the " +
                (m_settings.install == SshInstall::kexec ? "kexec" : "reboot") +
                (after.empty() ? "; power-cycled back to its default kernel" : "; " + after);
    if (cancelled(request)) {
      visit.fail(VisitOutcome::infra, "cancelled while waiting for the box");
    } else if (!crash.empty()) {
      visit.fail(VisitOutcome::boot_failed, "kernel crashed: " + crash + " (" + what + ")");
    } else {
      visit.fail(VisitOutcome::infra, what);
    }
    return finish(std::move(visit.result));
  }
  spdlog::info("ssh {}: up on {} after {:.1f}s", m_spec.name, booted->release,
               std::chrono::duration<double>(m_host->now() - boot_started).count());
  if (booted->release != request.kernel_release) {
    auto crash = crash_on(console.text());
    visit.fail(VisitOutcome::boot_failed, "booted kernel is '" + booted->release + "', expected '" +
                                            request.kernel_release + "'" +
                                            (crash.empty() ? "" : " (kernel crashed: " + crash + ")"));
    if (booted->release != box->release) {
      return_to_default(*booted, request);
    }
    return finish(std::move(visit.result));
  }
  run_all(visit, "/", *booted);
  if (visit.result.outcome == VisitOutcome::ok) {
    if (auto crash = crash_on(console.text()); !crash.empty()) {
      visit.fail(VisitOutcome::boot_failed, "kernel crashed: " + crash);
    }
  }
  // The console is judged: what the return reboot prints is not this kernel's verdict.
  console.stop();
  auto now = probe(m_settings.ssh_timeout);
  if (!now) {
    if (auto after = power_cycle_and_wait(booted->boot_id, request); !after.empty()) {
      spdlog::error("ssh {}: the box is not back after a lost visit: {}", m_spec.name, after);
    }
  } else if (now->boot_id == booted->boot_id || now->release != box->release) {
    return_to_default(*now, request);
  }
  cleanup();
  return finish(std::move(visit.result));
}

} // namespace bisectd::lab
