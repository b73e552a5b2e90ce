// The ssh backend's visit state machine against a simulated box (FakeBox implements lab::HostCommands: it answers
// ssh, scp, power_cycle and console argv like a lab server would), its settings, argv and parsing.

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "lab/ssh_machine.hpp"
#include "lab/ssh_remote.hpp"
#include "lab/ssh_settings.hpp"
#include "ssh_fake_box.hpp"
#include "support/text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

using namespace bisectd;
using namespace bisectd::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

using bisectd::testing::contains;

TEST_CASE("ssh: install none copies the artifacts to a per-visit dir and runs there, parsed like local", "[lab][ssh]") {
  SshFixture f;
  auto m = f.machine("none");
  auto result = m.visit(f.request(false));
  REQUIRE(result.has_value());
  INFO(result->message);
  CHECK(result->outcome == lab::VisitOutcome::ok);
  REQUIRE(result->runs.size() == 3);
  for (const auto& run : result->runs) {
    CHECK(run.ok);
    CHECK(run.metrics.at("bench.ops_per_sec") == 1000);
  }
  // Every ssh call pins the host key and never prompts.
  for (const auto& argv : f.box->calls) {
    auto line = base::join(argv, " ");
    CHECK(contains(line, "StrictHostKeyChecking=yes"));
    CHECK(contains(line, "BatchMode=yes"));
    CHECK(contains(line, "UserKnownHostsFile=" + f.known_hosts.string()));
  }
  // The run line: cd into the visit dir, the env and every word quoted.
  auto runs = std::count_if(f.box->remote_lines.begin(), f.box->remote_lines.end(), [](const std::string& l) {
    return l.starts_with("cd /var/tmp/bisectd/box-1-") &&
           contains(l, "&& exec env -- 'OMP_NUM_THREADS=1' ./bench --seconds 0.5 'a b;$(reboot)'");
  });
  CHECK(runs == 3);
  // scp -r of the artifact dir to that dir, removed afterwards; the box is not rebooted.
  auto scp = std::find_if(f.box->calls.begin(), f.box->calls.end(), [](const auto& a) { return a[0] == "scp"; });
  REQUIRE(scp != f.box->calls.end());
  CHECK(std::find(scp->begin(), scp->end(), "-r") != scp->end());
  CHECK(scp->back().starts_with("root@box:/var/tmp/bisectd/box-1-"));
  CHECK(f.box->count("rm -rf /var/tmp/bisectd/box-1-") == 1);
  CHECK(f.box->count("nohup") == 0);
  CHECK(f.box->boots == 1);
  // describe(): read once from the box.
  CHECK(m.describe() == "2 threads 2 sockets Intel(R) Xeon(R) Gold 6238M CPU @ 2.10GHz with 126G memory");
  REQUIRE(m.visit(f.request(false)).has_value());
  CHECK(f.box->count("cat /proc/cpuinfo") == 1);
}

TEST_CASE("ssh: a box without an SFTP subsystem gets scp -O, found on the first copy and kept", "[lab][ssh]") {
  SshFixture f;
  f.box->copies = FakeBox::Copies::legacy_only;
  auto m = f.machine("none");
  auto scps = [&] {
    std::vector<bool> legacy;
    for (const auto& argv : f.box->calls) {
      if (argv[0] == "scp") {
        legacy.push_back(std::find(argv.begin(), argv.end(), "-O") != argv.end());
      }
    }
    return legacy;
  };
  for (int visit = 0; visit < 2; ++visit) {
    auto result = m.visit(f.request(false));
    REQUIRE(result.has_value());
    INFO(result->message);
    CHECK(result->outcome == lab::VisitOutcome::ok);
    CHECK(result->runs.size() == 3);
  }
  CHECK(scps() == std::vector<bool>{false, true, true}); // sftp refused once, then scp -O only
  CHECK(f.box->cat_copies.empty());
}

TEST_CASE("ssh: a box without scp gets its files by cat over ssh: rwx bits only, links left out", "[lab][ssh]") {
  SshFixture f;
  f.box->copies = FakeBox::Copies::cat_only;
  fs::permissions(f.artifacts / "bench", fs::perms::set_uid | fs::perms::owner_all | fs::perms::group_read |
                                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  REQUIRE(base::make_dirs(f.artifacts / "sub dir"));
  REQUIRE(base::write_file_atomic(f.artifacts / "sub dir" / "data", "data"));
  fs::create_symlink("/etc/shadow", f.artifacts / "planted");
  auto m = f.machine("none");
  auto result = m.visit(f.request(false));
  REQUIRE(result.has_value());
  INFO(result->message);
  CHECK(result->outcome == lab::VisitOutcome::ok);
  CHECK(result->runs.size() == 3);
  REQUIRE(f.box->cat_copies.size() == 3); // bench, bzImage, sub dir/data; not the link
  std::string dir;
  for (const auto& [line, content] : f.box->cat_copies) {
    CHECK_FALSE(contains(line, "planted"));
    if (line.ends_with("/bench")) {
      CHECK(content == "#!/bin/sh\n");
      CHECK(contains(line, "/bench && chmod 755 /var/tmp/bisectd/box-1-"));
      dir = line.substr(line.find("cat > ") + 6);
      dir = dir.substr(0, dir.find("/bench"));
    }
    if (line.ends_with("/sub dir/data'")) {
      CHECK(content == "data");
    }
  }
  REQUIRE(dir.starts_with("/var/tmp/bisectd/box-1-"));
  CHECK(f.box->count("mkdir -p " + dir) == 3); // the visit dir (made even without files), bench's, bzImage's
  CHECK(f.box->count("mkdir -p '" + dir + "/sub dir' &&") == 1); // a name with a space quoted, before its file
  REQUIRE(m.visit(f.request(false)).has_value());
  CHECK(std::count_if(f.box->calls.begin(), f.box->calls.end(), [](const auto& a) { return a[0] == "scp"; }) == 2);
}

TEST_CASE("ssh: a copy no protocol can make names what each said", "[lab][ssh]") {
  SshFixture f;
  f.box->copies = FakeBox::Copies::cat_only;
  auto m = f.machine("none");
  auto request = f.request(false);
  request.artifact_dir = f.tmp.path() / "missing";
  auto result = m.visit(request);
  REQUIRE(result.has_value());
  CHECK(result->outcome == lab::VisitOutcome::infra);
  CHECK(contains(result->message, "copying the artifacts to the box failed: sftp: unreachable: scp: Connection "
                                  "closed; scp -O: unreachable: scp: Connection closed; cat: "));
}

TEST_CASE("ssh: an unreachable box, a refused host key, failed authentication end the visit infra", "[lab][ssh]") {
  SshFixture f;
  auto m = f.machine("none");
  f.box->up = false;
  auto down = m.visit(f.request(false));
  REQUIRE(down.has_value());
  CHECK(down->outcome == lab::VisitOutcome::infra);
  CHECK(contains(down->message, "unreachable"));
  CHECK(down->runs.empty());

  f.box->up = true;
  f.box->fail_all_ssh = "@@@@@@@\n@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\nHost key verification failed.";
  auto key = m.visit(f.request(false));
  REQUIRE(key.has_value());
  CHECK(key->outcome == lab::VisitOutcome::infra);
  CHECK(contains(key->message, "ssh box-1: host key refused"));
  CHECK(contains(key->message, "Host key verification failed."));
  CHECK(key->message.find('\n') == std::string::npos);

  f.box->fail_all_ssh = "root@box: Permission denied (publickey).";
  auto auth = m.visit(f.request(false));
  REQUIRE(auth.has_value());
  CHECK(auth->outcome == lab::VisitOutcome::infra);
  CHECK(contains(auth->message, "authentication failed"));
}

TEST_CASE("ssh: a copy that fails half-way (disk full) ends infra and cleans up", "[lab][ssh]") {
  SshFixture f;
  f.box->disk_full = true;
  for (std::string install : {"none", "kexec"}) {
    auto m = f.machine(install);
    auto result = m.visit(f.request(install == "kexec"));
    REQUIRE(result.has_value());
    CHECK(result->outcome == lab::VisitOutcome::infra);
    CHECK(contains(result->message, "No space left on device"));
    CHECK(result->runs.empty());
  }
  CHECK(f.box->count("rm -rf") == 2);
  CHECK(f.box->count("kexec") == 0);
}

TEST_CASE("ssh: install kexec boots the build's kernel, checks uname -r, runs, returns to the default", "[lab][ssh]") {
  SshFixture f;
  auto m = f.machine("kexec");
  auto result = m.visit(f.request(true));
  REQUIRE(result.has_value());
  INFO(result->message);
  CHECK(result->outcome == lab::VisitOutcome::ok);
  CHECK(result->runs.size() == 3);
  // kexec -l with the box's initrd and its cmdline (BOOT_IMAGE dropped, the visit's marker added), then -e.
  REQUIRE(f.box->count("kexec -l") == 1);
  auto load = *std::find_if(f.box->remote_lines.begin(), f.box->remote_lines.end(),
                            [](const std::string& l) { return contains(l, "kexec -l"); });
  CHECK(contains(load, "--initrd=/boot/initrd.img-6.1.0-18-amd64"));
  CHECK(contains(load, "'--command-line=root=/dev/sda1 quiet bisectd.boot=box-1-"));
  CHECK(f.box->count("kexec -e") == 1);
  // Runs ran in / of the new boot; afterwards the box went back to its default kernel.
  CHECK(f.box->count("cd / && exec env --") == 3);
  CHECK(f.box->release == f.box->default_release);
  CHECK(f.box->boots == 3);
  CHECK(f.box->power_cycles == 0);
  // The console was captured for the visit.
  auto console = base::read_file(result->console_log);
  REQUIRE(console.has_value());
  CHECK(contains(*console, "Linux version " + f.box->test_release));
}

TEST_CASE("ssh: kexec refused ends infra; the box stays on its kernel", "[lab][ssh]") {
  SshFixture f;
  f.box->kexec_refused = true;
  auto m = f.machine("kexec");
  auto result = m.visit(f.request(true));
  REQUIRE(result.has_value());
  CHECK(result->outcome == lab::VisitOutcome::infra);
  CHECK(contains(result->message, "kexec refused the kernel: exit 1: kexec_load failed: Operation not permitted"));
  CHECK(f.box->count("kexec -e") == 0);
  CHECK(f.box->boots == 1);
}

TEST_CASE("ssh: a kernel that never brings ssh back is power-cycled; no evidence → infra", "[lab][ssh]") {
  SshFixture f;
  f.box->kexec = FakeBox::Kexec::hangs;
  auto m = f.machine("kexec");
  auto result = m.visit(f.request(true));
  REQUIRE(result.has_value());
  CHECK(result->outcome == lab::VisitOutcome::infra);
  CHECK(contains(result->message, "no ssh within 30s of the kexec; power-cycled back to its default kernel"));
  CHECK(f.box->power_cycles == 1);
  CHECK(f.box->release == f.box->default_release);
  CHECK(result->runs.empty());
}

TEST_CASE("ssh: a kernel that panics (seen on the console) ends boot_failed", "[lab][ssh]") {
  SshFixture f;
  f.box->kexec = FakeBox::Kexec::panics;
  auto m = f.machine("kexec");
  auto result = m.visit(f.request(true));
  REQUIRE(result.has_value());
  CHECK(result->outcome == lab::VisitOutcome::boot_failed);
  CHECK(contains(result->message, "kernel crashed: Kernel panic - not syncing: VFS: Unable to mount root fs"));
  CHECK(f.box->power_cycles == 1);
  CHECK(f.box->release == f.box->default_release);
  CHECK(contains(base::read_file(result->console_log).value_or(""), "Kernel panic"));
}

TEST_CASE("ssh: another kernel came up: boot_failed, no sample", "[lab][ssh]") {
  SshFixture f;
  f.box->kexec = FakeBox::Kexec::boots_other;
  auto m = f.machine("kexec");
  auto result = m.visit(f.request(true));
  REQUIRE(result.has_value());
  CHECK(result->outcome == lab::VisitOutcome::boot_failed);
  CHECK(contains(result->message, "booted kernel is '6.1.0-other', expected '6.1.0-bisectd-abc'"));
  CHECK(f.box->runs == 0);
  CHECK(f.box->release == f.box->default_release);
}

TEST_CASE("ssh: a box that reboots or drops ssh during a run ends the visit, no sample kept", "[lab][ssh]") {
  SshFixture f;
  f.box->reboot_during_run = 1;
  auto m = f.machine("kexec");
  auto rebooted = m.visit(f.request(true));
  REQUIRE(rebooted.has_value());
  CHECK(rebooted->outcome == lab::VisitOutcome::infra);
  CHECK(contains(rebooted->message, "the box rebooted during run 1"));
  CHECK(rebooted->runs.empty());
  CHECK(f.box->release == f.box->default_release);

  SshFixture g;
  g.box->drop_during_run = 0;
  auto n = g.machine("none");
  auto dropped = n.visit(g.request(false));
  REQUIRE(dropped.has_value());
  CHECK(dropped->outcome == lab::VisitOutcome::infra);
  CHECK(contains(dropped->message, "ssh connection lost during run 0"));
  CHECK(dropped->runs.empty());
}

TEST_CASE("ssh: a failing benchmark is a failed run, not a failed visit", "[lab][ssh]") {
  SshFixture f;
  f.box->bench_output = "no metrics here\n";
  auto m = f.machine("none");
  auto result = m.visit(f.request(false));
  REQUIRE(result.has_value());
  CHECK(result->outcome == lab::VisitOutcome::ok);
  REQUIRE(result->runs.size() == 3);
  CHECK_FALSE(result->runs[0].ok);
  CHECK(contains(result->runs[0].error, "primary metric 'bench.ops_per_sec' missing"));
}

TEST_CASE("ssh: with monitors, each run's own ssh command brings the /proc files back as metrics", "[lab][ssh]") {
  // What a box printed for one monitored run (lab/ssh_monitors.hpp); its kernel has no /proc/softirqs.
  const std::string recorded = "BISECTD-PROC before vmstat\npgfault 100\nBISECTD-PROC-END\n"
                               "BISECTD-PROC before stat\ncpu  10 0 10 80 0 0 0 0 0 0\nintr 50\nctxt 70\n"
                               "BISECTD-PROC-END\nBISECTD-PROC before softirqs\nBISECTD-PROC-END\n"
                               "BISECTD-RUN-BEGIN uptime=7.25 stat=99 (sh) S 1 99 99 0 -1 0 5 0 0 0 0 0 0 0 20\n"
                               "bench.ops_per_sec: 1000\n"
                               "\nBISECTD-RUN-END uptime=7.75 stat=99 (sh) S 1 99 99 0 -1 0 5 40 0 0 0 0 20 5 20\n"
                               "BISECTD-PROC after vmstat\npgfault 350\nBISECTD-PROC-END\n"
                               "BISECTD-PROC after stat\ncpu  60 0 20 120 0 0 0 0 0 0\nintr 150\nctxt 170\n"
                               "BISECTD-PROC-END\nBISECTD-PROC after softirqs\nBISECTD-PROC-END\n";
  SshFixture plain;
  REQUIRE(plain.machine("none").visit(plain.request(false)).has_value());
  SshFixture f;
  f.box->run_stdout = recorded;
  auto m = f.machine("none");
  auto request = f.request(false);
  request.run.monitors = {"proc-vmstat", "vmstat", "softirqs", "time"};
  auto result = m.visit(request);
  REQUIRE(result.has_value());
  INFO(result->message);
  CHECK(result->outcome == lab::VisitOutcome::ok);
  // No round trip more than a visit without monitors: the snapshots travel with the run.
  CHECK(f.box->calls.size() == plain.box->calls.size());
  CHECK(f.box->count("bisectd_proc before vmstat softirqs stat; ") == 3);
  REQUIRE(result->runs.size() == 3);
  for (const auto& run : result->runs) {
    CHECK(run.ok);
    CHECK(run.metrics.at("bench.ops_per_sec") == 1000);
    CHECK(run.metrics.at("proc-vmstat.pgfault") == 250);
    CHECK(run.metrics.at("vmstat.system.in") == Approx(200)); // 100 interrupts in the box's 0.5 s
    CHECK(run.metrics.at("vmstat.system.cs") == Approx(200));
    CHECK(run.metrics.at("vmstat.cpu.us") == Approx(50)); // 50 of 100 ticks
    CHECK(run.metrics.at("time.user_time") == Approx(0.2));
    CHECK(run.metrics.at("time.minor_page_faults") == 40);
    CHECK(std::none_of(run.metrics.begin(), run.metrics.end(),
                       [](const auto& metric) { return metric.first.starts_with("softirqs."); }));
    // The run log is the benchmark's output, as on every backend: no marker, no /proc text.
    CHECK(base::read_file(run.log_path).value_or("") == "bench.ops_per_sec: 1000\n");
  }
}

TEST_CASE("ssh settings: lab-file mistakes are file:line: key: errors", "[lab][ssh]") {
  test::TempDir tmp;
  auto at = [](std::string value, int line) {
    auto s = lab::scalar_setting(std::move(value));
    s.where = "lab.yaml:" + std::to_string(line) + ": machines[0].settings.key";
    return s;
  };
  lab::MachineSpec spec;
  spec.name = "box";
  spec.backend = "ssh";
  spec.settings = {{"host", at("box", 3)},
                   {"install", at("pxe", 4)},
                   {"identity_file", at("keys/missing", 5)},
                   {"colour", at("red", 6)}};
  auto parsed = lab::parse_ssh_settings(spec);
  REQUIRE_FALSE(parsed.has_value());
  const auto& message = parsed.error().message;
  INFO(message);
  CHECK(contains(message, "machine box: settings.known_hosts: missing (required by backend ssh)"));
  CHECK(contains(message, "lab.yaml:4: machines[0].settings.key: unknown value 'pxe' (known: none, kexec, reboot)"));
  CHECK(contains(message, "lab.yaml:5: machines[0].settings.key: 'keys/missing': no such file"));
  CHECK(contains(message, "lab.yaml:6: machines[0].settings.key: unknown key for backend ssh"));

  lab::MachineSpec reboot = spec;
  REQUIRE(base::write_file_atomic(tmp.path() / "kh", "x\n"));
  reboot.settings = {{"host", at("box", 3)},
                     {"install", at("reboot", 4)},
                     {"known_hosts", at((tmp.path() / "kh").string(), 5)},
                     {"kernel_dir", at("tmp/x", 6)}};
  auto bad = lab::parse_ssh_settings(reboot);
  REQUIRE_FALSE(bad.has_value());
  CHECK(contains(bad.error().message, "settings.reboot_command: missing"));
  CHECK(contains(bad.error().message, "lab.yaml:6: machines[0].settings.key: 'tmp/x' must be an absolute path"));
}

TEST_CASE("ssh remote pieces: argv, run line, probe, description, cmdline", "[lab][ssh]") {
  lab::SshSettings s;
  s.host = "::1";
  s.port = 2222;
  s.known_hosts = "/etc/kh";
  s.identity_file = "/id";
  auto ssh = lab::ssh_argv(s, "uname -r", 7s);
  CHECK(base::join(ssh, " ") ==
        "ssh -T -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/etc/kh "
        "-o GlobalKnownHostsFile=/dev/null -o UpdateHostKeys=no -o ConnectTimeout=7 -o ServerAliveInterval=5 "
        "-o ServerAliveCountMax=3 -o LogLevel=ERROR -o IdentitiesOnly=yes -i /id -p 2222 -l root -- ::1 uname -r");
  auto scp = lab::scp_argv(s, {"/a", "/b"}, "/var/tmp/x/", false, 7s);
  CHECK(scp.back() == "root@[::1]:/var/tmp/x/");
  CHECK(std::find(scp.begin(), scp.end(), "2222") != scp.end());

  CHECK(lab::remote_run_command({"x=y"}, {}, "/").error().code == ErrorCode::invalid_input);
  CHECK(lab::remote_run_command({"bench"}, {{"A B", "1"}}, "/").error().code == ErrorCode::invalid_input);
  CHECK(lab::remote_run_command({"bench", std::string("a\0b", 3)}, {}, "/").error().code == ErrorCode::invalid_input);
  CHECK(lab::remote_run_command({"page_fault", "--seconds", "2"}, {{"X", "it's"}}, "/").value() ==
        "cd / && exec env -- 'X=it'\\''s' page_fault --seconds 2");

  auto probe = lab::parse_probe("6.1.0\nabc-123\nroot=/dev/sda1\n");
  REQUIRE(probe.has_value());
  CHECK(probe->release == "6.1.0");
  CHECK(probe->boot_id == "abc-123");
  CHECK(probe->cmdline == "root=/dev/sda1");
  CHECK_FALSE(lab::parse_probe("6.1.0\n").has_value());

  CHECK(lab::describe_box("processor : 0\nmodel name : QEMU Virtual CPU version 2.5+\n", "MemTotal: 500000 kB\n") ==
        "1 thread 1 socket QEMU Virtual CPU version 2.5+ with 488M memory");
  CHECK(lab::describe_box("", "").empty());
  CHECK(lab::kexec_cmdline("BOOT_IMAGE=/vmlinuz-6.1 root=UUID=x ro initrd=/i bisectd.boot=old console=ttyS0", "v1") ==
        "root=UUID=x ro console=ttyS0 bisectd.boot=v1");
}

TEST_CASE("ssh: the detached kexec/reboot line needs only sh and sleep, and outlives the session's SIGHUP",
          "[lab][ssh]") {
  test::TempDir dir;
  // The box's PATH offers sh and sleep only, as a busybox initramfs without the nohup applet does.
  auto bin = dir.path() / "bin";
  fs::create_directories(bin);
  fs::create_symlink("/bin/sh", bin / "sh");
  auto sleep_program = base::find_program("sleep");
  REQUIRE(sleep_program.has_value());
  fs::create_symlink(*sleep_program, bin / "sleep");
  auto marker = dir.path() / "it ran";
  auto line = lab::detached_line("echo ran > " + base::shell_quote(marker.string()));
  CHECK_FALSE(contains(line, "nohup"));
  // The session ends at once and its process group gets SIGHUP, as sshd's does when the connection closes. setsid
  // plays sshd: a session of its own, which base::run's clean-up of its child's process group does not reach.
  REQUIRE(base::find_program("setsid").has_value());
  base::Command cmd;
  cmd.argv = {"setsid", "-w", "/bin/sh", "-c", line + "\nkill -HUP 0"};
  cmd.env = {{"PATH", bin.string()}};
  cmd.timeout = 10s;
  cmd.leave_detached = true; // what a session started on the box leaves running is the box's, not ours
  auto started = std::chrono::steady_clock::now();
  auto status = base::run(cmd);
  REQUIRE(status.has_value());
  CHECK(std::chrono::steady_clock::now() - started < 1s); // ssh returns before the box goes down
  CHECK_FALSE(fs::exists(marker));
  for (int i = 0; i < 100 && !fs::exists(marker); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  CHECK(base::read_file(marker).value_or("") == "ran\n");
}
