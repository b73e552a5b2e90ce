#pragma once
// The ssh backend's pure pieces: the ssh/scp argv (host keys pinned, never learned), remote command lines (every
// word through base::shell_quote, the one quoting function), and reading what a box says about itself.

#include "base/error.hpp"
#include "base/process.hpp"
#include "lab/ssh_settings.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::lab {

// `ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=<known_hosts> ... -p PORT -l USER --
// HOST <remote>`: a host key not in known_hosts (or a changed one) is refused, never added; no password prompt.
std::vector<std::string> ssh_argv(const SshSettings& s, const std::string& remote, std::chrono::seconds connect);

// How files reach a box. OpenSSH 9's scp speaks SFTP, which needs the box's SFTP subsystem (a minimal sshd_config
// or dropbear without sftp-server has none: "scp: Connection closed"); `scp -O` speaks the legacy protocol, which
// needs scp on the box; `cat` over ssh needs only sh, mkdir, cat and chmod there.
enum class CopyProtocol { sftp, scp, cat };
inline constexpr CopyProtocol k_copy_protocols[] = {CopyProtocol::sftp, CopyProtocol::scp, CopyProtocol::cat};
// "sftp", "scp -O", "cat".
const char* to_string(CopyProtocol protocol);

// `scp ... [-O] [-r] -- LOCAL... USER@HOST:REMOTE` with the same pinning (`-O` for CopyProtocol::scp). `remote` is a
// plain path (no quoting needed).
std::vector<std::string> scp_argv(const SshSettings& s, const std::vector<std::string>& local,
                                  const std::string& remote, bool recursive, std::chrono::seconds connect,
                                  CopyProtocol protocol = CopyProtocol::sftp);

// The remote line that writes its stdin to `remote_file` with `mode`'s rwx bits (never setuid/setgid), its
// directory made first, every path quoted: one file of a `cat` copy.
std::string cat_copy_line(const std::string& remote_file, unsigned mode);

// The argv as one line for a remote shell: each word shell-quoted, joined by spaces. Error (invalid_input): a NUL.
Result<std::string> shell_join(const std::vector<std::string>& argv);

// The remote line that runs `line` (a shell command line) in the background a second later, detached from the ssh
// session, so that ssh returns before the box goes down (kexec -e, reboot). SIGHUP is ignored, which what it runs
// inherits; no `nohup`, which busybox builds (initramfs boxes, rescue systems) often leave out.
std::string detached_line(const std::string& line);

// `env -- K=V ... ARGV`: the job's command with its env, every word quoted.
// Errors (invalid_input): an empty argv, a NUL anywhere, an env name that is not [A-Za-z_][A-Za-z0-9_]*.
Result<std::string> remote_env_command(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& env);

// `cd DIR && exec env -- K=V ... ARGV`: the job's command on the box, with its env, never pasted unquoted.
// Errors: as remote_env_command.
Result<std::string> remote_run_command(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& env, const std::string& cwd);

// What one `probe` prints: `uname -r`, the boot id and /proc/cmdline, one per line.
inline constexpr std::string_view k_probe_command = "uname -r; cat /proc/sys/kernel/random/boot_id; cat /proc/cmdline";
struct BoxState {
  std::string release;
  std::string boot_id;
  std::string cmdline;
};
// Error (infra): fewer than two non-empty lines.
Result<BoxState> parse_probe(std::string_view output);

// "88 threads 2 sockets Intel(R) Xeon(R) Gold 6238M CPU @ 2.10GHz with 128G memory" from /proc/cpuinfo and
// /proc/meminfo; empty when cpuinfo has no processor line.
std::string describe_box(std::string_view cpuinfo, std::string_view meminfo);

// The kexec'd kernel's command line: `box_cmdline` without BOOT_IMAGE=, initrd= and earlier bisectd.boot= words,
// plus `bisectd.boot=<visit>` (the visit's marker, also seen on the console).
std::string kexec_cmdline(std::string_view box_cmdline, std::string_view visit);

// One line saying why an ssh/scp call failed: the host key was refused, authentication failed, the box is
// unreachable, or the tail of ssh's stderr.
std::string ssh_failure(const base::ExitStatus& status);

} // namespace bisectd::lab
