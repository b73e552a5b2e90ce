#pragma once
// The `ssh` backend's settings (a machine's `settings:` in the lab file; configs/lab/ssh-example.yaml documents
// each key). Read with lab::SettingsReader, so every mistake is a `file:line: key: what` error at start-up.

#include "base/error.hpp"
#include "lab/machine.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace bisectd::lab {

enum class SshInstall { none, kexec, reboot };
enum class SshInitrd { box, lab, none };

struct SshSettings {
  std::string host; // required
  int port = 22;
  std::string user = "root";
  std::filesystem::path identity_file; // empty: ssh's default keys
  std::filesystem::path known_hosts;   // required: the box's pinned host key(s)
  SshInstall install = SshInstall::none;
  std::vector<std::string> reboot_command;           // install: reboot — argv on the box, boots the new kernel once
  std::vector<std::string> return_command{"reboot"}; // argv on the box after a kernel visit: back to its default
  std::string kernel_dir = "/var/tmp/bisectd";       // on the box: per-visit directories (kernel, artifacts)
  std::string cmdline;                               // empty: the box's /proc/cmdline with bisectd's marker added
  SshInitrd initrd = SshInitrd::box;
  std::string initrd_path;                // initrd: box — on the box (default /boot/initrd.img-<release>)
  std::filesystem::path initrd_file;      // initrd: lab — on the daemon's host, copied per visit
  std::vector<std::string> power_cycle;   // argv on the daemon's host
  std::vector<std::string> console;       // argv on the daemon's host; stdout = the serial console
  std::chrono::seconds boot_timeout{300}; // kexec/reboot (or power cycle) → ssh answers again
  std::chrono::seconds ssh_timeout{30};   // one ssh/scp step (connect + command), not a benchmark run
  int quarantine_after = 3;               // consecutive infra visits before the box is quarantined
  std::vector<std::string> ssh{"ssh"};    // programs (PATH lookup) with extra options: [scp, -O]
  std::vector<std::string> scp{"scp"};
};

// Parses and checks `spec.settings`. Errors (invalid_config) list every bad key, one per line.
Result<SshSettings> parse_ssh_settings(const MachineSpec& spec);

} // namespace bisectd::lab
