#include "base/sandbox.hpp"

#include "base/process.hpp"
#include "base/strings.hpp"

#include <array>
#include <cstdlib>
#include <mutex>

namespace bisectd::base {

namespace {

namespace fs = std::filesystem;

std::mutex g_policy_mutex;
SandboxPolicy g_policy; // NOLINT(cert-err58-cpp): set once at start-up, read by every sandboxed spawn

void bind_existing(std::vector<std::string>& out, const char* how, const fs::path& path) {
  std::error_code ec;
  if (!path.empty() && fs::exists(path, ec)) {
    out.insert(out.end(), {how, path.string(), path.string()});
  }
}

// Where the host's Unix sockets are (D-Bus, systemd, container runtimes, agents); abstract ones are out of reach
// in the network namespace --unshare-all makes.
constexpr std::array<const char*, 2> k_socket_dirs{"/run", "/var/run"};

// A directory goes behind an empty tmpfs (before the step's own directories are bound back into it), a file behind
// /dev/null (after them: a secret file stays hidden inside a directory the step may read). A symlink's target goes:
// it is what the link reaches inside too, the system being bound as it is.
void hide(std::vector<std::string>& out, const fs::path& path, bool directories) {
  std::error_code ec;
  auto target = fs::canonical(path, ec);
  if (ec || !target.has_relative_path() || fs::is_directory(target, ec) != directories) { // absent, or "/" itself
    return;
  }
  if (directories) {
    out.insert(out.end(), {"--tmpfs", target.string()});
  } else {
    out.insert(out.end(), {"--ro-bind", "/dev/null", target.string()});
  }
}

} // namespace

void set_sandbox_policy(SandboxPolicy policy) {
  std::lock_guard lock(g_policy_mutex);
  g_policy = std::move(policy);
}

SandboxPolicy sandbox_policy() {
  std::lock_guard lock(g_policy_mutex);
  return g_policy;
}

std::vector<std::string> sandbox_argv(const SandboxPolicy& policy, const Sandbox& sandbox,
                                      const std::map<std::string, std::string>& env, const fs::path& cwd,
                                      const std::vector<std::string>& argv) {
  // --as-pid-1: the command is bwrap's own child, which bwrap waits for; with bwrap's init process in between, bwrap
  // exits on the init's word without waiting, and the command's CPU time never reaches our rusage (time.* monitors).
  std::vector<std::string> out{policy.bwrap,    "--ro-bind",         "/",             "/",          "--dev",
                               "/dev",          "--proc",            "/proc",         "--tmpfs",    "/tmp",
                               "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--as-pid-1"};
  for (const auto* dir : k_socket_dirs) {
    hide(out, dir, true);
  }
  for (const auto& path : policy.hidden) {
    hide(out, path, true);
  }
  for (const auto& dir : sandbox.readable) {
    bind_existing(out, "--ro-bind", dir);
  }
  for (const auto& dir : sandbox.writable) {
    bind_existing(out, "--bind", dir);
  }
  for (const auto& path : sandbox.read_only) {
    bind_existing(out, "--ro-bind", path);
  }
  for (const auto& path : policy.hidden) {
    hide(out, path, false);
  }
  std::map<std::string, std::string> inside;
  for (const auto& name : k_sandbox_environment) {
    if (const char* value = std::getenv(name.c_str()); value != nullptr) {
      inside[name] = value;
    }
  }
  inside["HOME"] = "/tmp";
  for (const auto& [name, value] : env) {
    inside[name] = value;
  }
  for (const auto& [name, value] : inside) {
    out.insert(out.end(), {"--setenv", name, value});
  }
  if (!cwd.empty()) {
    out.insert(out.end(), {"--chdir", cwd.string()});
  }
  out.emplace_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string sandbox_unusable(const std::string& bwrap) {
  Command probe;
  probe.argv = sandbox_argv(SandboxPolicy{.enabled = true, .bwrap = bwrap, .hidden = {}}, {}, {}, "/", {"true"});
  probe.timeout = std::chrono::seconds(20);
  auto status = run(probe);
  if (!status) {
    return status.error().message;
  }
  if (!status->ok()) {
    return base::describe_argv({bwrap}) + " " + status->describe() + ": " + std::string(trim(status->err));
  }
  return "";
}

} // namespace bisectd::base
