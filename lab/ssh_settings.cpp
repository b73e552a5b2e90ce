#include "lab/ssh_settings.hpp"

#include "lab/settings.hpp"

namespace bisectd::lab {

namespace {

const std::set<std::string> k_known_keys{
  "host",           "port",         "user",        "identity_file",    "known_hosts", "install",     "reboot_command",
  "return_command", "kernel_dir",   "cmdline",     "initrd",           "initrd_path", "initrd_file", "power_cycle",
  "console",        "boot_timeout", "ssh_timeout", "quarantine_after", "ssh",         "scp"};

// A path on the box that goes into remote commands and scp targets: absolute, and plain characters only, so
// it reads the same to scp, sh and kexec.
bool plain_remote_path(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return false;
  }
  return path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+") ==
         std::string::npos;
}

bool plain_host(const std::string& host) {
  return !host.empty() && host.front() != '-' &&
         host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:") ==
           std::string::npos;
}

} // namespace

Result<SshSettings> parse_ssh_settings(const MachineSpec& spec) {
  SshSettings s;
  SettingsReader r(spec.name, "ssh", spec.settings, spec.origin);
  r.check_keys(k_known_keys);
  s.host = r.string("host", true).value_or("");
  if (r.has("host") && !s.host.empty() && !plain_host(s.host)) {
    r.error("host", "'" + s.host + "' is not a host name or address");
  }
  s.port = static_cast<int>(r.integer("port", 1, 65535).value_or(s.port));
  s.user = r.string("user").value_or(s.user);
  if (s.user.empty() || s.user.front() == '-' || s.user.find_first_of(" @:/\n") != std::string::npos) {
    r.error("user", "'" + s.user + "' is not a user name");
  }
  s.identity_file = r.path("identity_file", false, true).value_or("");
  s.known_hosts = r.path("known_hosts", true, true).value_or("");
  if (auto install = r.choice("install", {"none", "kexec", "reboot"})) {
    s.install = *install == "kexec" ? SshInstall::kexec : *install == "reboot" ? SshInstall::reboot : SshInstall::none;
  }
  s.reboot_command = r.list("reboot_command", s.install == SshInstall::reboot).value_or(s.reboot_command);
  s.return_command = r.list("return_command").value_or(s.return_command);
  if (s.return_command.empty()) {
    r.error("return_command", "must not be empty");
  }
  s.kernel_dir = r.string("kernel_dir").value_or(s.kernel_dir);
  if (!plain_remote_path(s.kernel_dir) || s.kernel_dir == "/") {
    r.error("kernel_dir", "'" + s.kernel_dir + "' must be an absolute path of [A-Za-z0-9_./+-], not /");
  }
  s.cmdline = r.string("cmdline").value_or("");
  if (s.cmdline.find('\n') != std::string::npos) {
    r.error("cmdline", "must be one line");
  }
  if (auto initrd = r.choice("initrd", {"box", "lab", "none"})) {
    s.initrd = *initrd == "lab" ? SshInitrd::lab : *initrd == "none" ? SshInitrd::none : SshInitrd::box;
  }
  s.initrd_path = r.string("initrd_path").value_or("");
  if (!s.initrd_path.empty() && !plain_remote_path(s.initrd_path)) {
    r.error("initrd_path", "'" + s.initrd_path + "' must be an absolute path of [A-Za-z0-9_./+-]");
  }
  s.initrd_file = r.path("initrd_file", s.initrd == SshInitrd::lab, true).value_or("");
  s.power_cycle = r.list("power_cycle").value_or(s.power_cycle);
  s.console = r.list("console").value_or(s.console);
  s.boot_timeout = r.duration("boot_timeout", std::chrono::seconds(5)).value_or(s.boot_timeout);
  s.ssh_timeout = r.duration("ssh_timeout", std::chrono::seconds(2)).value_or(s.ssh_timeout);
  s.quarantine_after = static_cast<int>(r.integer("quarantine_after", 0, 1000).value_or(s.quarantine_after));
  s.ssh = r.list("ssh", false, true).value_or(s.ssh);
  s.scp = r.list("scp", false, true).value_or(s.scp);
  if (s.ssh.empty() || s.scp.empty()) {
    r.error(s.ssh.empty() ? "ssh" : "scp", "must not be empty");
  }
  if (!r.ok()) {
    return std::unexpected(r.to_error());
  }
  return s;
}

} // namespace bisectd::lab
