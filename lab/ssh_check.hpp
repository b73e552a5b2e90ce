#pragma once
// `bisectctl machine check` on an ssh box, the pure half: one remote command that asks the box what a visit will
// need (root, kexec and whether the kernel allows it, perf, free disk in kernel_dir), what it printed read back,
// and the lines that say ok or what is wrong and how to fix it. SshMachine::check (ssh_machine_check.cpp) runs it.

#include "lab/machine.hpp"
#include "lab/ssh_settings.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::lab {

// What the box said about itself. Absent fields: it printed nothing there (no such file, no such program).
struct BoxFacts {
  std::optional<long> uid;
  std::string kexec;                       // `command -v kexec`
  std::string lockdown;                    // /sys/kernel/security/lockdown: "[none] integrity confidentiality"
  std::optional<long> kexec_load_disabled; // /proc/sys/kernel/kexec_load_disabled
  std::string perf;                        // `command -v perf`
  std::optional<std::int64_t> free_kb;     // `df -Pk kernel_dir`: available 1K blocks
};

// The remote line: sections separated by a line "@@", kernel_dir made first (quoted), stderr dropped.
std::string box_check_command(const std::string& kernel_dir);
BoxFacts parse_box_check(std::string_view output);

// The lines for what `s` needs from the box: root and free disk always, kexec for install: kexec, perf when
// present (needed by no setting: jobs with `perf:` lose those rows without it).
std::vector<CheckLine> box_check_lines(const BoxFacts& facts, const SshSettings& s);

} // namespace bisectd::lab
