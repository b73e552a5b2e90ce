// QEMU backend settings and command line.

#include "lab/qemu_command.hpp"

#include "base/fs.hpp"
#include "base/units.hpp"
#include "lab/settings.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace bisectd::lab {

namespace {

namespace fs = std::filesystem;

const std::set<std::string> k_known_keys{"qemu",    "accel",     "boot_timeout", "append", "bench_dir",
                                         "busybox", "cache_dir", "tsc_khz",      "network", "perf"};

// settings.tsc_khz: auto | off | a rate in kHz.
std::optional<long> read_tsc_khz(SettingsReader& r) {
  auto value = r.string("tsc_khz");
  if (!value || *value == "auto") {
    return host_tsc_khz();
  }
  if (*value == "off") {
    return 0;
  }
  char* end = nullptr;
  long khz = std::strtol(value->c_str(), &end, 10);
  if (*end != '\0' || khz < 1000) {
    r.error("tsc_khz", "expected auto, off or a rate in kHz, got '" + *value + "'");
    return std::nullopt;
  }
  return khz;
}

} // namespace

Result<QemuSettings> parse_qemu_settings(const MachineSpec& spec) {
  QemuSettings settings;
  SettingsReader r(spec.name, "qemu", spec.settings, spec.origin);
  r.check_keys(k_known_keys);
  settings.qemu = r.string("qemu").value_or(settings.qemu);
  settings.accel = r.choice("accel", {"auto", "kvm", "tcg"}).value_or(settings.accel);
  settings.boot_timeout = r.duration("boot_timeout").value_or(settings.boot_timeout);
  settings.append = r.string("append").value_or(settings.append);
  settings.bench_dir = r.path("bench_dir").value_or(settings.bench_dir);
  settings.busybox = r.path("busybox").value_or(settings.busybox);
  settings.cache_dir = r.path("cache_dir").value_or(settings.cache_dir);
  settings.perf = r.path("perf").value_or(settings.perf);
  settings.tsc_khz = read_tsc_khz(r).value_or(0);
  settings.user_network = r.choice("network", {"none", "user"}).value_or("none") == "user";
  if (spec.cpus < 1 || spec.memory_mb < 64) {
    r.error("cpus", "qemu needs cpus >= 1 and memory_mb >= 64");
  }
  if (!r.ok()) {
    return std::unexpected(r.to_error());
  }
  if (settings.bench_dir.empty()) {
    settings.bench_dir = find_bench_dir();
  }
  if (settings.cache_dir.empty()) {
    settings.cache_dir = base::default_cache_dir() / "initramfs";
  }
  return settings;
}

fs::path find_bench_dir() {
  if (const char* env = std::getenv("BISECTD_BENCH_CORE_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  auto dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up) {
    std::error_code missing;
    if (fs::is_regular_file(dir / "bench-core" / "page_fault", missing)) {
      return dir / "bench-core";
    }
    dir = dir.parent_path();
  }
  return {};
}

long host_tsc_khz() {
#if defined(__x86_64__) || defined(__i386__)
  static const long k_khz = [] {
    auto start = std::chrono::steady_clock::now();
    auto ticks = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<long>(static_cast<double>(__rdtsc() - ticks) / seconds / 1000.0);
  }();
  return k_khz;
#else
  return 0;
#endif
}

bool kvm_usable() {
  int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  ::close(fd);
  return true;
}

std::string kernel_command_line(const QemuSettings& settings) {
  std::string line = "console=ttyS0,115200 panic=-1 oops=panic i8042.noaux rdinit=/init";
  if (settings.tsc_khz > 0) {
    line += " tsc_early_khz=" + std::to_string(settings.tsc_khz) + " tsc=reliable clocksource=tsc";
  }
  if (!settings.append.empty()) {
    line += " " + settings.append;
  }
  return line;
}

std::vector<std::string> qemu_argv(const QemuSettings& settings, const MachineSpec& spec, bool kvm,
                                   const fs::path& kernel, const fs::path& initrd) {
  // -nodefaults: no default NIC, VGA, floppy or CD-ROM; the one serial port is the console on stdout.
  std::vector<std::string> argv{settings.qemu, "-nodefaults", "-nographic", "-serial", "stdio",  "-no-reboot",
                                "-monitor",    "none",        "-machine",   "pc",      "-accel", kvm ? "kvm" : "tcg"};
  if (kvm) {
    argv.insert(argv.end(), {"-cpu", "host"});
  }
  argv.insert(argv.end(), {"-m", std::to_string(spec.memory_mb), "-smp", std::to_string(spec.cpus), "-kernel",
                           kernel.string(), "-initrd", initrd.string(), "-append", kernel_command_line(settings)});
  if (settings.user_network) {
    argv.insert(argv.end(), {"-nic", "user,model=virtio-net-pci"});
  } else {
    argv.insert(argv.end(), {"-nic", "none"});
  }
  return argv;
}

} // namespace bisectd::lab
