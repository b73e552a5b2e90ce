#pragma once
// Backend `qemu`: boots the built bzImage in a fresh QEMU process per visit (KVM when /dev/kvm is
// usable, else TCG) with the generated initramfs (lab/initramfs.hpp), keeps the serial console log of
// every boot, and turns the console into a verdict: a panic, oops, triple fault, no boot marker before
// settings.boot_timeout, or a `uname -r` other than the build's kernel_release is a boot failure and
// no sample is accepted. Visits are independent processes, so machines run in parallel.

#include "lab/console.hpp"
#include "lab/initramfs.hpp"
#include "lab/machine.hpp"
#include "lab/qemu_command.hpp"

#include <memory>
#include <string>

namespace bisectd::lab {

// How a QEMU process ended.
struct BootEnd {
  bool timed_out = false;         // QEMU was killed at the visit's overall timeout
  bool no_marker_timeout = false; // killed because the boot marker did not come in time
  bool kvm_stuck = false;         // killed because the kernel printed nothing under KVM (retry with TCG)
  std::string exit;               // "exit 0", "killed by signal 9": for messages
};

class QemuMachine : public Machine {
public:
  // Errors: bad settings (invalid_config), or QEMU not installed (not_found, naming the package).
  static Result<std::unique_ptr<Machine>> create(const MachineSpec& spec);

  QemuMachine(MachineSpec spec, QemuSettings settings);

  [[nodiscard]] const MachineSpec& spec() const override { return m_spec; }

  // Boots request.artifact_dir/bzImage and runs request.run.command request.runs times in the guest.
  // Logs in request.log_dir: <boot id>-console.log (kept always) and <boot id>-run<i>.log.
  // Errors: an invalid request (no bzImage, empty command, a line break in an argument).
  Result<VisitResult> visit(const VisitRequest& request) override;

private:
  [[nodiscard]] std::string next_boot_id() const;
  // The visit's initramfs: the cached base image, the cached perf archive when the run asks for perf, this job's data.
  Status prepare_initrd(const std::vector<CpioEntry>& job, const std::filesystem::path& initrd,
                        const RunSpec& run) const;
  // KVM for accel kvm, and for auto when /dev/kvm is usable and KVM has not failed in this process.
  [[nodiscard]] bool use_kvm() const;
  // Runs QEMU to its end under the boot watchdog. Errors: QEMU could not start, or cancel.
  Result<BootEnd> boot(const VisitRequest& request, const std::filesystem::path& initrd,
                       const std::filesystem::path& console, bool kvm) const;

  MachineSpec m_spec;
  QemuSettings m_settings;
};

// The verdict on one boot (outcome + message; runs are not filled in) from its parsed console and how
// QEMU ended. Pure; unit-tested.
VisitResult judge_boot(const ConsoleLog& console, const BootEnd& end, const VisitRequest& request);

} // namespace bisectd::lab
