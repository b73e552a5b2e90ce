#pragma once
// Untrusted steps — a tree's build command, its benchmark on the `local` machine, its get_maintainer.pl — run
// under bubblewrap: no network, every namespace new (its processes die with it), the whole file system read-only,
// the daemon's own files (data dir, home, token, key and password files) and the host's sockets (/run) hidden,
// only the step's own directories writable, and an environment of a few allow-listed variables plus what the job
// sets (passed with --setenv: bwrap itself never runs with it). The daemon's user is the user inside (an
// unprivileged `bisectd` user as the systemd unit sets up; bisectd warns when that is root).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace bisectd::base {

// What one step may see beyond the read-only system.
struct Sandbox {
  std::vector<std::filesystem::path> writable; // bound read-write at the same path (worktree, build dir)
  std::vector<std::filesystem::path> readable; // bound read-only, visible even inside a hidden directory
  // Bound read-only after the writable binds: parts of a writable directory the step must not change (the
  // worktree's .git, which the daemon's own unsandboxed checkout reads).
  std::vector<std::filesystem::path> read_only;
};

// The deployment's choice, set once at start-up.
struct SandboxPolicy {
  bool enabled = false;
  std::string bwrap = "bwrap";
  // Directories replaced by empty ones (data dir, $HOME, token's and config's dirs), files by an empty one (a lab's
  // ssh key, the LAVA token, the SMTP password file); /run and /var/run always.
  std::vector<std::filesystem::path> hidden;
};

void set_sandbox_policy(SandboxPolicy policy);
SandboxPolicy sandbox_policy();

// The environment variables a sandboxed step inherits from the daemon; everything else is dropped.
inline const std::vector<std::string> k_sandbox_environment{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM"};

// bwrap's argv running `argv` in `cwd` with `env` (the allow-listed inherited variables and the step's own).
std::vector<std::string> sandbox_argv(const SandboxPolicy& policy, const Sandbox& sandbox,
                                      const std::map<std::string, std::string>& env, const std::filesystem::path& cwd,
                                      const std::vector<std::string>& argv);

// "" when `bwrap` can start a sandbox on this host, else why not (not installed, namespaces refused).
std::string sandbox_unusable(const std::string& bwrap);

} // namespace bisectd::base
