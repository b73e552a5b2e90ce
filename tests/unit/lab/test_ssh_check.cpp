// `bisectctl machine check` on an ssh box: what the box says parsed into lines, and SshMachine::check against a
// simulated box (a good one, a refused host key, no kexec, a locked-down kernel, --power).
#include "lab/ssh_check.hpp"
#include "ssh_fake_box.hpp"

using namespace bisectd;
using namespace bisectd::test;

namespace {

const lab::CheckLine* line_of(const std::vector<lab::CheckLine>& lines, const std::string& name) {
  auto found = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.name == name; });
  return found == lines.end() ? nullptr : &*found;
}

lab::SshSettings settings(lab::SshInstall install, const std::string& user = "root") {
  lab::SshSettings s;
  s.host = "box";
  s.user = user;
  s.install = install;
  return s;
}

} // namespace

TEST_CASE("ssh check: the box's answers, read back", "[lab][ssh]") {
  auto facts = lab::parse_box_check(FakeBox{}.check_answers);
  CHECK(facts.uid == 0);
  CHECK(facts.kexec == "/usr/sbin/kexec");
  CHECK(facts.lockdown == "[none] integrity confidentiality");
  CHECK(facts.kexec_load_disabled == 0);
  CHECK(facts.perf == "/usr/bin/perf");
  CHECK(facts.free_kb == 50000000);
  auto lines = lab::box_check_lines(facts, settings(lab::SshInstall::kexec));
  CHECK(lab::check_passed(lines));
  CHECK(line_of(lines, "disk")->detail == "47.7G free in /var/tmp/bisectd");

  // Nothing printed (no such program, no such file): absent, never a guess.
  auto bare = lab::parse_box_check("1000\n@@\n@@\n@@\n@@\n@@\n");
  CHECK(bare.uid == 1000);
  CHECK(bare.kexec.empty());
  CHECK_FALSE(bare.kexec_load_disabled);
  CHECK_FALSE(bare.free_kb);
  auto kernel = lab::box_check_lines(bare, settings(lab::SshInstall::kexec, "bench"));
  CHECK_FALSE(lab::check_passed(kernel));
  CHECK_FALSE(line_of(kernel, "root")->ok);
  CHECK(testing::contains(line_of(kernel, "kexec")->detail, "apt install kexec-tools"));
  CHECK(testing::contains(line_of(kernel, "disk")->detail, "is it writable?"));
  CHECK_FALSE(line_of(kernel, "perf")->needed);
  // A userspace box needs neither root nor kexec.
  auto plain = lab::parse_box_check("1000\n@@\n@@\n@@\n@@\n@@\nFS 1K Used Avail Use% On\n/dev/sda1 1 2 900000 1% /\n");
  auto userspace = lab::box_check_lines(plain, settings(lab::SshInstall::none, "bench"));
  CHECK(lab::check_passed(userspace));
  CHECK(line_of(userspace, "kexec") == nullptr);

  // A kernel locked down (Secure Boot) or kexec_load disabled refuses kexec however it is installed.
  facts.lockdown = "none [integrity] confidentiality";
  CHECK(testing::contains(lab::box_check_lines(facts, settings(lab::SshInstall::kexec))[1].detail,
                          "locked down (integrity, Secure Boot)"));
  facts.lockdown.clear();
  facts.kexec_load_disabled = 1;
  CHECK_FALSE(line_of(lab::box_check_lines(facts, settings(lab::SshInstall::kexec)), "kexec")->ok);
  CHECK(lab::box_check_command("/var/tmp/a b") ==
        "exec 2>/dev/null; id -u; echo @@; command -v kexec; echo @@; cat /sys/kernel/security/lockdown; echo @@; "
        "cat /proc/sys/kernel/kexec_load_disabled; echo @@; command -v perf; echo @@; mkdir -p '/var/tmp/a b' && "
        "df -Pk '/var/tmp/a b'");
}

TEST_CASE("ssh check: a good box passes every line, the power command only looked for", "[lab][ssh]") {
  SshFixture f;
  auto m = f.machine("kexec");
  auto lines = m.check({});
  for (const auto& l : lines) {
    INFO(l.name << ": " << l.detail);
    CHECK(l.ok);
  }
  CHECK(lab::check_passed(lines));
  for (const char* name : {"reach", "root", "kexec", "disk", "perf", "copy", "console", "power"}) {
    CHECK(line_of(lines, name) != nullptr);
  }
  CHECK(testing::contains(line_of(lines, "reach")->detail, "root@box:22 answers: 6.1.0-18-amd64"));
  CHECK(line_of(lines, "copy")->detail == "copies use sftp");
  CHECK(testing::contains(line_of(lines, "console")->detail, "attached"));
  CHECK(testing::contains(line_of(lines, "power")->detail, "would run power-cycle box-1"));
  CHECK(f.box->power_cycles == 0);
  CHECK(f.box->count("rm -f /var/tmp/bisectd/bisectd-check-") == 1); // the copied file is gone again

  auto powered = m.check({.power = true});
  CHECK(f.box->power_cycles == 1);
  CHECK(line_of(powered, "power")->ok);
}

TEST_CASE("ssh check: a refused host key fails at reach with how to fix it; no kexec fails kexec", "[lab][ssh]") {
  SshFixture f;
  f.box->fail_all_ssh = "Host key verification failed.";
  auto refused = f.machine("kexec").check({});
  CHECK_FALSE(lab::check_passed(refused));
  CHECK_FALSE(line_of(refused, "reach")->ok);
  CHECK(testing::contains(line_of(refused, "reach")->detail, "host key refused"));
  CHECK(testing::contains(line_of(refused, "reach")->detail, "ssh-keyscan -p 22 box"));
  CHECK(line_of(refused, "kexec") == nullptr); // nothing asked of a box that did not answer

  SshFixture g;
  g.box->check_answers = "0\n@@\n@@\n[none]\n@@\n0\n@@\n@@\nFS 1K Used Avail Use% On\n/dev/sda1 1 2 90000000 1% /\n";
  auto no_kexec = g.machine("kexec").check({});
  CHECK_FALSE(lab::check_passed(no_kexec));
  CHECK_FALSE(line_of(no_kexec, "kexec")->ok);
  CHECK(line_of(no_kexec, "reach")->ok);
  CHECK_FALSE(line_of(no_kexec, "perf")->ok); // reported, not needed
  CHECK_FALSE(line_of(no_kexec, "perf")->needed);
}
