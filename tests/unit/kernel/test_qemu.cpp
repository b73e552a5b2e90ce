#include "lab/qemu_command.hpp"
#include "lab/qemu_machine.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace bisectd;

namespace {

lab::MachineSpec spec_with(std::map<std::string, std::string> settings) {
  lab::MachineSpec spec;
  spec.name = "qemu1";
  spec.backend = "qemu";
  spec.cpus = 2;
  spec.memory_mb = 512;
  for (auto& [key, value] : settings) {
    spec.settings[key] = lab::scalar_setting(std::move(value));
  }
  return spec;
}

// The value after `flag` in argv.
std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

} // namespace

TEST_CASE("lab::qemu_argv", "[kernel]") {
  auto settings = lab::parse_qemu_settings(spec_with({{"append", "init_on_free=1"}, {"bench_dir", "/b"}}));
  REQUIRE(settings);
  auto spec = spec_with({});
  auto tcg = lab::qemu_argv(*settings, spec, false, "/a/bzImage", "/l/initrd.gz");
  CHECK(tcg.front() == "qemu-system-x86_64");
  CHECK(std::count(tcg.begin(), tcg.end(), "-nographic") == 1);
  CHECK(std::count(tcg.begin(), tcg.end(), "-no-reboot") == 1);
  CHECK(after(tcg, "-accel") == "tcg");
  CHECK(after(tcg, "-m") == "512");
  CHECK(after(tcg, "-smp") == "2");
  CHECK(after(tcg, "-kernel") == "/a/bzImage");
  CHECK(after(tcg, "-initrd") == "/l/initrd.gz");
  auto append = after(tcg, "-append");
  for (const char* word : {"console=ttyS0", "panic=-1", "oops=panic", "init_on_free=1"}) {
    INFO(word);
    CHECK(append.find(word) != std::string::npos);
  }
  CHECK(std::count(tcg.begin(), tcg.end(), "host") == 0);
  CHECK(std::count(tcg.begin(), tcg.end(), "-nodefaults") == 1);
  CHECK(after(tcg, "-serial") == "stdio");
  CHECK(after(tcg, "-nic") == "none");
  auto networked = lab::parse_qemu_settings(spec_with({{"bench_dir", "/b"}, {"network", "user"}}));
  REQUIRE(networked);
  CHECK(after(lab::qemu_argv(*networked, spec, false, "/k", "/i"), "-nic") == "user,model=virtio-net-pci");
  CHECK_FALSE(lab::parse_qemu_settings(spec_with({{"bench_dir", "/b"}, {"network", "tap"}})));
  settings->tsc_khz = 2600000;
  CHECK(after(lab::qemu_argv(*settings, spec, false, "/k", "/i"), "-append")
          .find("tsc_early_khz=2600000 tsc=reliable clocksource=tsc") != std::string::npos);
  settings->tsc_khz = 0;
  CHECK(after(lab::qemu_argv(*settings, spec, false, "/k", "/i"), "-append").find("tsc") == std::string::npos);
  auto kvm = lab::qemu_argv(*settings, spec, true, "/a/bzImage", "/l/initrd.gz");
  CHECK(after(kvm, "-accel") == "kvm");
  CHECK(after(kvm, "-cpu") == "host");
}

TEST_CASE("lab::parse_qemu_settings checks keys and values", "[kernel]") {
  auto defaults = lab::parse_qemu_settings(spec_with({{"bench_dir", "/b"}}));
  REQUIRE(defaults);
  CHECK(defaults->accel == "auto");
  CHECK(defaults->boot_timeout == std::chrono::seconds(120));
  CHECK(defaults->bench_dir == "/b");
  CHECK_FALSE(defaults->cache_dir.empty());
  auto set = lab::parse_qemu_settings(spec_with({{"accel", "tcg"}, {"boot_timeout", "45s"}}));
  REQUIRE(set);
  CHECK(set->accel == "tcg");
  CHECK(set->boot_timeout == std::chrono::seconds(45));
  auto unknown = lab::parse_qemu_settings(spec_with({{"acel", "tcg"}}));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::invalid_config);
  CHECK(unknown.error().message == "machine qemu1: settings.acel: unknown key for backend qemu");
  CHECK_FALSE(lab::parse_qemu_settings(spec_with({{"accel", "hvf"}})));
  CHECK_FALSE(lab::parse_qemu_settings(spec_with({{"boot_timeout", "soon"}})));
  CHECK(lab::parse_qemu_settings(spec_with({{"tsc_khz", "off"}}))->tsc_khz == 0);
  CHECK(lab::parse_qemu_settings(spec_with({{"tsc_khz", "2000000"}}))->tsc_khz == 2000000);
  CHECK_FALSE(lab::parse_qemu_settings(spec_with({{"tsc_khz", "fast"}})));
  auto khz = lab::host_tsc_khz();
  CHECK(khz == lab::host_tsc_khz()); // measured once
#if defined(__x86_64__)
  CHECK(khz > 100000); // > 100 MHz on any x86 host
#endif
}

TEST_CASE("lab::QemuMachine::create names the package when QEMU is missing", "[kernel]") {
  auto made = lab::QemuMachine::create(spec_with({{"qemu", "qemu-system-nonexistent-arch"}}));
  REQUIRE_FALSE(made);
  CHECK(made.error().message ==
        "machine qemu1: qemu-system-nonexistent-arch not found (install the Debian package qemu-system-x86)");
}

TEST_CASE("lab::judge_boot", "[kernel]") {
  lab::VisitRequest request;
  request.kernel_release = "6.1.192-gabc";
  lab::BootEnd exited;
  exited.exit = "exit 0";
  auto parse = [](const char* text) { return lab::parse_console(text); };

  CHECK(lab::judge_boot(parse("BISECTD-BOOT release=6.1.192-gabc\nBISECTD-DONE\n"), exited, request).outcome ==
        lab::VisitOutcome::ok);
  auto panic = lab::judge_boot(parse("[ 1.0] Kernel panic - not syncing: VFS\n"), exited, request);
  CHECK(panic.outcome == lab::VisitOutcome::boot_failed);
  CHECK(panic.message.find("Kernel panic") != std::string::npos);
  auto wrong = lab::judge_boot(parse("BISECTD-BOOT release=6.1.192-gother\nBISECTD-DONE\n"), exited, request);
  CHECK(wrong.outcome == lab::VisitOutcome::boot_failed);
  CHECK(wrong.runs.empty());
  lab::BootEnd no_marker;
  no_marker.no_marker_timeout = true;
  auto hung = lab::judge_boot(parse("SeaBIOS\n"), no_marker, request);
  CHECK(hung.outcome == lab::VisitOutcome::boot_failed);
  CHECK(hung.message.find("within the boot timeout") != std::string::npos);
  auto reset = lab::judge_boot(parse("BISECTD-BOOT release=6.1.192-gabc\nBISECTD-RUN-BEGIN 0\n"), exited, request);
  CHECK(reset.outcome == lab::VisitOutcome::boot_failed);
  lab::BootEnd timed_out;
  timed_out.timed_out = true;
  auto slow = lab::judge_boot(parse("BISECTD-BOOT release=6.1.192-gabc\nBISECTD-RUN-BEGIN 0\n"), timed_out, request);
  CHECK(slow.outcome == lab::VisitOutcome::infra);
}
