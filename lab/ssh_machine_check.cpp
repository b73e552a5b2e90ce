// SshMachine::check: what `bisectctl machine check` finds on an ssh box, without a visit.
#include "base/fs.hpp"
#include "base/strings.hpp"
#include "lab/ssh_check.hpp"
#include "lab/ssh_machine.hpp"

#include <unistd.h>

namespace bisectd::lab {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr auto k_console_look = 3s; // how long the console command is watched

// How to fix what ssh_failure() said.
std::string reach_fix(const std::string& why, const SshSettings& s) {
  if (why.starts_with("host key refused")) {
    return "; fix: compare `ssh-keyscan -p " + std::to_string(s.port) + " " + s.host + "` with " +
           s.known_hosts.string() + " and put the box's key there (the daemon never learns keys)";
  }
  if (why.starts_with("authentication failed")) {
    auto key = s.identity_file.empty() ? std::string("the daemon's public key") : s.identity_file.string() + ".pub";
    return "; fix: add " + key + " to ~" + s.user + "/.ssh/authorized_keys on the box";
  }
  return "; fix: is the box up, " + s.host + ":" + std::to_string(s.port) + " right, and sshd running there?";
}

} // namespace

std::vector<CheckLine> SshMachine::check(const CheckOptions& options) {
  std::unique_lock visit(m_visit_mutex, std::try_to_lock);
  if (!visit.owns_lock()) {
    return {{"busy", false, true, "a visit is running on the box: check it again when the visit ends"}};
  }
  std::vector<CheckLine> lines;
  auto box = probe(m_settings.ssh_timeout);
  if (box) {
    lines.push_back({"reach", true, true,
                     m_settings.user + "@" + m_settings.host + ":" + std::to_string(m_settings.port) + " answers: " +
                       box->release + ", boot " + box->boot_id.substr(0, 8)});
    check_box(lines);
  } else {
    lines.push_back({"reach", false, true, box.error().message + reach_fix(box.error().message, m_settings)});
  }
  lines.push_back(check_console());
  lines.push_back(check_power(options, box ? box->boot_id : ""));
  return lines;
}

void SshMachine::check_box(std::vector<CheckLine>& lines) {
  auto status = remote(box_check_command(m_settings.kernel_dir), m_settings.ssh_timeout);
  if (!status || status->code == 255) {
    auto why = status ? ssh_failure(*status) : status.error().message;
    lines.push_back({"box", false, true, "asking the box: " + why});
    return;
  }
  for (auto& line : box_check_lines(parse_box_check(status->out), m_settings)) {
    lines.push_back(std::move(line));
  }
  // A small file through the copy a visit makes: finds (and keeps) the protocol the box takes.
  auto local = fs::temp_directory_path() / ("bisectd-check-" + std::to_string(::getpid()) + "-" + m_spec.name);
  auto remote_file = m_settings.kernel_dir + "/" + local.filename().string();
  CheckLine copy{"copy", false, true, ""};
  if (auto written = base::write_file_atomic(local, "bisectd machine check\n"); !written) {
    copy.detail = "a file to copy: " + written.error().message;
  } else {
    auto why = copy_to_box({local.string()}, remote_file, false, m_settings.ssh_timeout * 2);
    copy.ok = why.empty();
    copy.detail = why.empty() ? std::string("copies use ") + to_string(*m_copy_protocol) : why;
    (void)remote("rm -f " + base::shell_quote(remote_file), m_settings.ssh_timeout);
  }
  std::error_code ec;
  fs::remove(local, ec);
  lines.push_back(copy);
}

CheckLine SshMachine::check_console() {
  if (m_settings.console.empty()) {
    return {"console", true, false, "no console command: a kernel that dies is seen only by ssh not answering"};
  }
  base::Command cmd;
  cmd.argv = m_settings.console;
  cmd.timeout = k_console_look;
  auto status = m_host->run(cmd);
  if (!status) {
    return {"console", false, true, base::describe_argv(cmd.argv) + ": " + status.error().message};
  }
  auto bytes = std::to_string(status->out.size()) + " bytes";
  if (status->timed_out) {
    return {"console", true, true, base::describe_argv(cmd.argv) + " attached: " + bytes + " in " +
                                     std::to_string(k_console_look.count()) + "s (an idle box may print nothing)"};
  }
  if (status->ok()) {
    return {"console", true, true, base::describe_argv(cmd.argv) + " exited 0 after " + bytes +
                                     " (restarted during a visit when it exits)"};
  }
  return {"console", false, true,
          base::describe_argv(cmd.argv) + " " + status->describe() + ": " + ssh_failure(*status)};
}

CheckLine SshMachine::check_power(const CheckOptions& options, const std::string& boot_id) {
  if (m_settings.power_cycle.empty()) {
    return {"power", true, false, "no power_cycle: a box that hangs waits for a person (and is quarantined)"};
  }
  auto argv = base::describe_argv(m_settings.power_cycle);
  if (!options.power) {
    if (!m_host->has_program(m_settings.power_cycle.front())) {
      return {"power", false, true, m_settings.power_cycle.front() + " not found on the daemon's host"};
    }
    return {"power", true, true, "would run " + argv + " (not run: --power runs it and waits for the box)"};
  }
  auto why = power_cycle_and_wait(boot_id, VisitRequest{});
  return {"power", why.empty(), true, why.empty() ? "ran " + argv + ": the box came back" : why};
}

} // namespace bisectd::lab
