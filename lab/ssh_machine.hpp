#pragma once
// Backend `ssh`: a real lab box reached over ssh with a pinned host key (lab/ssh_settings.hpp).
//
// A visit, under an exclusive per-box lock (in this process and, by flock, across processes on this host):
//   console capture starts (settings.console, the whole visit, into <boot id>-console.log)
//   probe      ssh: `uname -r`, boot id, /proc/cmdline (and, once, CPU/memory for describe())
//   install: none    scp -r the artifacts to <kernel_dir>/<boot id>; the runs run there, like `local`
//                    (every copy: sftp, else scp -O, else cat over ssh, whichever the box was found to take)
//   install: kexec   scp bzImage (+ modules.tar.gz, unpacked into /lib/modules) → kexec -l → kexec -e
//   install: reboot  scp bzImage to <kernel_dir>/vmlinuz-bisectd → settings.reboot_command
//   wait       until ssh answers with a new boot id (boot_timeout); else power_cycle, wait for the default kernel,
//              and end boot_failed (the console shows the kernel died) or infra (no evidence)
//   verify     `uname -r` == the build's release, else boot_failed: no sample from another kernel
//   runs ×n    ssh `cd DIR && exec env -- K=V ARGV` (quoted), output → <boot id>-run<i>.log, parsed as `local`;
//              with monitors, the same ssh command prints the /proc files around the run (lab/ssh_monitors.hpp)
//   judge      the console (same crash rules as qemu): a crash → boot_failed, no sample accepted
//   return     kernel installs: settings.return_command (reboot), wait; power_cycle when the box stays away
// Connection lost or the box rebooted mid-run: the visit ends (boot_failed with console evidence, else infra).
//
// Every host-side command goes through HostCommands, so the whole sequence is unit-tested with a fake.

#include "base/process.hpp"
#include "lab/machine.hpp"
#include "lab/ssh_host.hpp"
#include "lab/ssh_remote.hpp"
#include "lab/ssh_settings.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace bisectd::lab {

class SshMachine : public Machine {
public:
  // Errors: bad settings (invalid_config, `file:line: key:` per mistake), ssh/scp not installed (not_found).
  // Never connects: a box that is down does not stop the daemon from starting.
  static Result<std::unique_ptr<Machine>> create(const MachineSpec& spec);

  SshMachine(MachineSpec spec, SshSettings settings, std::shared_ptr<HostCommands> host);

  [[nodiscard]] const MachineSpec& spec() const override { return m_spec; }
  [[nodiscard]] const SshSettings& settings() const { return m_settings; }
  // Errors: an invalid request (empty command, no bzImage for a kernel install, a NUL in an argument).
  Result<VisitResult> visit(const VisitRequest& request) override;
  // Reachable with the pinned key, root, kexec allowed, free disk, perf, how copies get there, the console and
  // power commands (ssh_machine_check.cpp); "busy" while a visit runs.
  std::vector<CheckLine> check(const CheckOptions& options) override;
  // The lab file's description, else what the box said once over ssh (CPU model, threads, sockets, memory).
  [[nodiscard]] std::string describe() override;
  [[nodiscard]] int quarantine_after() const override { return m_settings.quarantine_after; }

private:
  struct Visit;
  Result<VisitResult> visit_locked(const VisitRequest& request);
  // One command on the box (quoted line), with `timeout`.
  Result<base::ExitStatus> remote(const std::string& line, std::chrono::seconds timeout,
                                  const std::filesystem::path& output = {});
  Result<BoxState> probe(std::chrono::seconds connect);
  void read_description();
  // Polls until the box answers with a boot id other than `old` (or the deadline). nullopt: it did not.
  std::optional<BoxState> wait_for_new_boot(const std::string& old, const VisitRequest& request);
  // Runs settings.power_cycle and waits for the box; "" when it came back, else why not.
  std::string power_cycle_and_wait(const std::string& old, const VisitRequest& request);
  // Sends the box back to its default kernel after a kernel visit (return_command, power_cycle if it stays away).
  void return_to_default(const BoxState& test_boot, const VisitRequest& request);
  // The runs; fills result.runs, or sets result.outcome/message when the visit must end.
  void run_all(Visit& visit, const std::string& cwd, const BoxState& boot);
  // Copies `local` (files, or directories when `recursive`) to `to` on the box, scp's way (`to` ending in '/': into
  // it). The first copy to a box tries sftp, then scp -O, then cat, and the box keeps the first that worked; a
  // failure forgets it, so the next copy tries again. A refused key, a timeout or a full disk is no protocol's
  // fault: it ends the copy at once. "" when copied, else why not (ssh_copy.cpp).
  std::string copy_to_box(const std::vector<std::string>& local, const std::string& to, bool recursive,
                          std::chrono::seconds timeout);
  std::string copy_with(CopyProtocol protocol, const std::vector<std::string>& local, const std::string& to,
                        bool recursive, std::chrono::seconds timeout);
  void check_box(std::vector<CheckLine>& lines);
  CheckLine check_console();
  CheckLine check_power(const CheckOptions& options, const std::string& boot_id);
  std::string cat_copy(const std::vector<std::string>& local, const std::string& to, bool recursive,
                       std::chrono::seconds timeout);

  MachineSpec m_spec;
  SshSettings m_settings;
  std::shared_ptr<HostCommands> m_host;
  std::mutex m_visit_mutex;
  std::optional<CopyProtocol> m_copy_protocol; // what copies to this box use (visits only: m_visit_mutex)
  std::mutex m_description_mutex;
  std::string m_description;
};

} // namespace bisectd::lab
