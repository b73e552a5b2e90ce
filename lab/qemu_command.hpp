#pragma once
// The QEMU backend's settings (the `settings:` of a qemu machine in the lab file) and the QEMU argv.

#include "base/error.hpp"
#include "lab/machine.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace bisectd::lab {

inline constexpr std::string_view k_qemu_package = "qemu-system-x86";

struct QemuSettings {
  std::string qemu = "qemu-system-x86_64";        // settings.qemu
  std::string accel = "auto";                     // settings.accel: auto (kvm when usable) | kvm | tcg
  std::chrono::seconds boot_timeout{120};         // settings.boot_timeout: kernel start → boot marker
  std::string append;                             // settings.append: extra kernel command line
  std::filesystem::path bench_dir;                // settings.bench_dir: the bench-core programs
  std::filesystem::path busybox = "/bin/busybox"; // settings.busybox: a static busybox
  std::filesystem::path cache_dir;                // settings.cache_dir: initramfs cache
  // settings.perf: the perf put into the guest (with its libraries) for jobs that ask for perf; Debian's
  // linux-perf package. Missing: those runs go without perf metrics.
  std::filesystem::path perf = "/usr/bin/perf";
  // settings.network: none | user. The guest runs a tree's code: by default it has no NIC at all (QEMU's
  // default user network would let it reach the host's loopback services, the daemon's API among them).
  bool user_network = false;
  // settings.tsc_khz: auto (measured on the host) | off | kHz. The guest's TSC runs at the host's rate
  // under TCG and KVM, but a tinyconfig kernel (no ACPI/HPET) cannot calibrate it and falls back to the
  // jiffies clocksource, whose time lags when the host is busy: benchmarks then time themselves
  // wrongly. tsc_early_khz + clocksource=tsc gives them host wall time. 0 = leave the kernel alone.
  long tsc_khz = 0;
};

// Parses `spec.settings`; empty bench_dir/cache_dir get their defaults (find_bench_dir(), the bisectd
// cache dir). Errors (invalid_config) name the machine and the key: unknown keys, bad values.
Result<QemuSettings> parse_qemu_settings(const MachineSpec& spec);

// The bench-core directory: $BISECTD_BENCH_CORE_DIR, else bench-core/ next to or up to three levels
// above this executable (the build tree layout). Empty when not found.
std::filesystem::path find_bench_dir();

// The host TSC rate in kHz, measured once per process against the steady clock (0 when unknown).
long host_tsc_khz();

// True when /dev/kvm can be opened read-write.
bool kvm_usable();

// The kernel command line: console on ttyS0, a panic or oops exits QEMU (panic=-1 + -no-reboot), the
// TSC clocksource when settings.tsc_khz is set, then settings.append.
std::string kernel_command_line(const QemuSettings& settings);

// The full argv (pure): -nographic -no-reboot, -accel kvm|tcg, -m, -smp, -kernel, -initrd, -append.
std::vector<std::string> qemu_argv(const QemuSettings& settings, const MachineSpec& spec, bool kvm,
                                   const std::filesystem::path& kernel, const std::filesystem::path& initrd);

} // namespace bisectd::lab
