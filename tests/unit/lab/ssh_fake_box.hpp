#pragma once
// A simulated ssh box (FakeBox implements lab::HostCommands: it answers ssh, scp, power_cycle and console argv like
// a lab server would) and a fixture making SshMachines on it, shared by the ssh visit and machine check tests.

#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "lab/ssh_machine.hpp"
#include "lab/ssh_remote.hpp"
#include "lab/ssh_settings.hpp"
#include "support/temp_dir.hpp"
#include "support/text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bisectd::test {

using bisectd::testing::contains;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A lab box as seen from the daemon's host.
class FakeBox final : public lab::HostCommands {
public:
  // How the box reacts.
  bool up = true;
  std::string fail_all_ssh; // stderr of every ssh call (exit 255): unreachable, host key, auth
  bool disk_full = false;   // scp fails half-way
  // What copies the box takes: scp over SFTP and the legacy protocol, only `scp -O` (no SFTP subsystem), or neither
  // (no scp on the box either: only `cat` over ssh).
  enum class Copies { sftp, legacy_only, cat_only } copies = Copies::sftp;
  std::map<std::string, std::string> cat_copies; // remote line → the content its stdin carried
  // What the box answers to a machine check's questions (lab::box_check_command): root, kexec, lockdown, perf, disk.
  std::string check_answers = "0\n@@\n/usr/sbin/kexec\n@@\n[none] integrity confidentiality\n@@\n0\n@@\n"
                              "/usr/bin/perf\n@@\nFilesystem 1024-blocks Used Available Capacity Mounted on\n"
                              "/dev/sda1 100000000 1000 50000000 1% /\n";
  bool kexec_refused = false;
  enum class Kexec { boots, hangs, panics, boots_other } kexec = Kexec::boots;
  std::string test_release = "6.1.0-bisectd-abc";
  int reboot_during_run = -1; // run index during which the box reboots (its default kernel)
  int drop_during_run = -1;   // run index during which the box stops answering
  std::string bench_output = "bench.ops_per_sec: 1000\n";
  std::string run_stdout; // what a run prints when not empty (a monitored run's markers and blocks), else bench_output

  // What it is now.
  std::string default_release = "6.1.0-18-amd64";
  std::string release = default_release;
  int boots = 1;
  int power_cycles = 0;
  int runs = 0;
  std::vector<std::vector<std::string>> calls; // every argv run, in order
  std::vector<std::string> remote_lines;       // the remote command of every ssh call

  Result<base::ExitStatus> run(const base::Command& command) override {
    const auto& argv = command.argv;
    if (argv.front() == "console-cmd" && command.cancel == nullptr) { // a machine check looks for a while
      base::ExitStatus looked;
      looked.timed_out = true;
      looked.out = "[ 1.0] console line\n";
      return looked;
    }
    if (argv.front() == "console-cmd") {
      {
        std::lock_guard lock(m_mutex);
        m_console = command.stdout_path;
        console(""); // what the console server buffered before we attached
      }
      while (command.cancel != nullptr && !command.cancel->load()) {
        std::this_thread::sleep_for(5ms);
      }
      return make_error(ErrorCode::cancelled, "cancelled");
    }
    std::lock_guard lock(m_mutex);
    calls.push_back(argv);
    base::ExitStatus status;
    status.code = 0;
    if (argv.front() == "power-cycle") {
      ++power_cycles;
      boot_default();
      return status;
    }
    if (argv.front() == "ssh" || argv.front() == "scp") {
      if (!fail_all_ssh.empty()) {
        return failed(255, fail_all_ssh);
      }
      if (!up) {
        return failed(255, "ssh: connect to host box port 22: Connection refused");
      }
    }
    if (argv.front() == "scp") {
      bool legacy = std::find(argv.begin(), argv.end(), "-O") != argv.end();
      if (copies == Copies::cat_only || (copies == Copies::legacy_only && !legacy)) {
        return failed(1, "scp: Connection closed");
      }
      if (disk_full) {
        return failed(1, "scp: write remote \"/var/tmp/bisectd/x/bzImage\": No space left on device");
      }
      return status;
    }
    REQUIRE(argv.front() == "ssh");
    const auto& line = argv.back();
    remote_lines.push_back(line);
    if (contains(line, "command -v kexec")) { // a machine check's questions
      status.out = check_answers;
    } else if (contains(line, " && cat > ")) {
      cat_copies[line] = base::read_file(command.stdin_path).value_or("(unreadable)");
    } else if (line == lab::k_probe_command) {
      status.out = release + "\nboot-" + std::to_string(boots) + "\nBOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n";
    } else if (contains(line, "cat /proc/cpuinfo")) {
      status.out = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6238M CPU @ 2.10GHz\nphysical id\t: 0\n"
                   "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6238M CPU @ 2.10GHz\nphysical id\t: 1\n"
                   "BISECTD-MEMINFO\nMemTotal:       131795016 kB\n";
    } else if (contains(line, "kexec -l")) {
      if (kexec_refused) {
        return failed(1, "kexec_load failed: Operation not permitted");
      }
    } else if (contains(line, "kexec -e")) {
      up = false;
      if (kexec == Kexec::boots || kexec == Kexec::boots_other) {
        up = true;
        ++boots;
        release = kexec == Kexec::boots ? test_release : "6.1.0-other";
        console("[    0.000000] Linux version " + release + "\n[    1.0] Run /init as init process\n");
      } else if (kexec == Kexec::panics) {
        console("[    0.000000] Linux version " + test_release +
                "\n[    0.9] Kernel panic - not syncing: VFS: Unable to mount root fs\n");
      }
    } else if (contains(line, "env -- ")) {
      int index = runs++;
      if (index == reboot_during_run) {
        boot_default();
        return failed(255, "Connection to box closed by remote host.");
      }
      if (index == drop_during_run) {
        up = false;
        return failed(255, "Timeout, server box not responding.");
      }
      REQUIRE(base::write_file_atomic(command.stdout_path, run_stdout.empty() ? bench_output : run_stdout));
    } else if (contains(line, "reboot")) {
      boot_default();
    }
    return status;
  }
  void sleep(std::chrono::milliseconds duration) override {
    std::this_thread::sleep_for(1ms); // lets the console thread attach, as real time would
    std::lock_guard lock(m_mutex);
    m_now += duration;
  }
  bool has_program(const std::string& program) override { return program == "power-cycle"; }
  std::chrono::steady_clock::time_point now() override {
    std::lock_guard lock(m_mutex);
    m_now += 10ms; // every look at the clock costs a little, so polling loops always end
    return m_now;
  }

  [[nodiscard]] int count(std::string_view part) const {
    return static_cast<int>(
      std::count_if(remote_lines.begin(), remote_lines.end(), [&](const std::string& l) { return contains(l, part); }));
  }

private:
  base::ExitStatus failed(int code, const std::string& err) {
    base::ExitStatus status;
    status.code = code;
    status.err = err + "\n";
    return status;
  }
  void boot_default() {
    up = true;
    ++boots;
    release = default_release;
    console("[    0.000000] Linux version " + default_release + "\n");
  }
  void console(const std::string& text) {
    m_pending += text;
    if (!m_console.empty()) {
      (void)base::append_file(m_console, m_pending);
      m_pending.clear();
    }
  }

  std::mutex m_mutex;
  fs::path m_console;
  std::string m_pending;
  std::chrono::steady_clock::time_point m_now{};
};

struct SshFixture {
  test::TempDir tmp;
  fs::path known_hosts = tmp.path() / "known_hosts";
  fs::path artifacts = tmp.path() / "artifacts";
  std::shared_ptr<FakeBox> box = std::make_shared<FakeBox>();

  SshFixture() {
    REQUIRE(base::write_file_atomic(known_hosts, "[box]:22 ssh-ed25519 AAAA\n"));
    REQUIRE(base::make_dirs(artifacts));
    REQUIRE(base::write_file_atomic(artifacts / "bench", "#!/bin/sh\n"));
    REQUIRE(base::write_file_atomic(artifacts / "bzImage", "kernel"));
  }

  lab::SshMachine machine(const std::string& install, lab::Settings extra = {}) {
    lab::MachineSpec spec;
    spec.name = "box-1";
    spec.group = "boxes";
    spec.backend = "ssh";
    spec.settings = {{"host", lab::scalar_setting("box")},
                     {"known_hosts", lab::scalar_setting(known_hosts.string())},
                     {"install", lab::scalar_setting(install)},
                     {"power_cycle", lab::list_setting({"power-cycle", "box-1"})},
                     {"console", lab::list_setting({"console-cmd"})},
                     {"boot_timeout", lab::scalar_setting("30s")}};
    for (auto& [key, value] : extra) {
      spec.settings[key] = value;
    }
    auto settings = lab::parse_ssh_settings(spec);
    REQUIRE(settings.has_value());
    return lab::SshMachine(spec, *settings, box);
  }

  lab::VisitRequest request(bool kernel) const {
    lab::VisitRequest r;
    r.commit = "abc";
    r.artifact_dir = artifacts;
    r.kernel_release = kernel ? box->test_release : "";
    r.run.command = {"./bench", "--seconds", "0.5", "a b;$(reboot)"};
    r.run.env = {{"OMP_NUM_THREADS", "1"}};
    r.run.primary = "bench.ops_per_sec";
    r.runs = 3;
    r.log_dir = tmp.path() / "logs";
    return r;
  }
};

} // namespace bisectd::test
