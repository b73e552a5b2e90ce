// make invocations for the kernel recipe.

#include "kbuild/kernel_make.hpp"

#include "base/strings.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <fstream>

namespace bisectd::kbuild {

namespace {

namespace fs = std::filesystem;

constexpr std::array<KernelArch, 3> k_arches{
  KernelArch{"x86_64", "bzImage", "arch/x86/boot/bzImage"},
  KernelArch{"x86", "bzImage", "arch/x86/boot/bzImage"},
  KernelArch{"i386", "bzImage", "arch/x86/boot/bzImage"},
};

base::Command make_command(const KernelMake& make, std::vector<std::string> argv) {
  base::Command cmd;
  cmd.argv = std::move(argv);
  cmd.env = make.env;
  cmd.cwd = make.worktree;
  cmd.cancel = make.cancel;
  cmd.idle_priority = make.idle_priority;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(make.deadline - std::chrono::steady_clock::now());
  cmd.timeout = std::max(left, std::chrono::milliseconds(1));
  cmd.sandbox = base::Sandbox{.writable = {make.worktree, make.objdir}, .readable = {}};
  cmd.sandbox->writable.insert(cmd.sandbox->writable.end(), make.writable.begin(), make.writable.end());
  if (auto ccache = make.env.find("CCACHE_DIR"); ccache != make.env.end()) {
    std::error_code ec; // it must exist to be bound into the sandbox
    fs::create_directories(ccache->second, ec);
    cmd.sandbox->writable.emplace_back(ccache->second);
  }
  // After every writable bind (the job's CCACHE_DIR could name it): the daemon's unsandboxed checkout reads the
  // worktree's git dir (vcs/worktree.cpp).
  cmd.sandbox->read_only.push_back(make.worktree / ".git");
  return cmd;
}

constexpr std::chrono::seconds k_progress_interval{60};

// UTS_VERSION ("#1 SMP PREEMPT_DYNAMIC <timestamp>", `uname -v`) is fixed, as are user and host: otherwise the
// build number (.version, incremented per link) and the build time would make every build's binary unique, and
// commits with identical code could not be recognised by their fingerprints (kbuild/fingerprint.hpp). bisectd never
// reads the build time from the banner; `uname -r` (the LOCALVERSION stamp) is what tells builds apart. The
// timestamp must be `date -d` parsable (initramfs and kheaders use it as an mtime).
constexpr std::string_view k_build_timestamp = "2000-01-01 00:00:00 UTC";
constexpr std::string_view k_build_version = "1";

// The last non-empty line of `log` (make's latest "CC mm/memory.o"), read from its last 4 KiB.
std::string last_line(const fs::path& log) {
  std::ifstream in(log, std::ios::binary | std::ios::ate);
  if (!in) {
    return "";
  }
  std::streamoff size = in.tellg();
  std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  auto lines = base::split(tail, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (auto line = base::trim(*it); !line.empty()) {
      return std::string(line);
    }
  }
  return "";
}

} // namespace

Result<KernelArch> kernel_arch(std::string_view arch) {
  for (const auto& entry : k_arches) {
    if (entry.arch == arch) {
      return entry;
    }
  }
  return make_error(ErrorCode::invalid_config, "build.arch: '" + std::string(arch) +
                                                 "' is not supported by the kernel recipe (x86_64, x86, i386)");
}

std::vector<std::string> make_argv(const KernelMake& make, const std::vector<std::string>& targets, int jobs) {
  std::vector<std::string> argv{"make",
                                "-C",
                                make.worktree.string(),
                                "O=" + make.objdir.string(),
                                "ARCH=" + make.arch,
                                "CC=" + make.compiler,
                                "HOSTCC=gcc",
                                "LOCALVERSION=" + make.localversion,
                                "KBUILD_BUILD_USER=bisectd",
                                "KBUILD_BUILD_HOST=bisectd",
                                "KBUILD_BUILD_TIMESTAMP=" + std::string(k_build_timestamp),
                                "KBUILD_BUILD_VERSION=" + std::string(k_build_version)};
  if (!make.kcflags.empty()) {
    argv.push_back("KCFLAGS=" + make.kcflags);
  }
  if (jobs > 0) {
    argv.push_back("-j" + std::to_string(jobs));
  }
  argv.insert(argv.end(), targets.begin(), targets.end());
  return argv;
}

Result<base::ExitStatus> run_make(const KernelMake& make, const std::vector<std::string>& targets, int jobs) {
  if (std::chrono::steady_clock::now() >= make.deadline) {
    base::ExitStatus status;
    status.timed_out = true;
    return status;
  }
  auto cmd = make_command(make, make_argv(make, targets, jobs));
  cmd.stdout_path = make.log;
  cmd.stderr_to_stdout = true;
  cmd.append = true;
  cmd.progress_interval = k_progress_interval;
  cmd.progress = [&make, what = base::join(targets, " ")](std::chrono::milliseconds elapsed) {
    spdlog::info("kbuild: make {} in {}: {}s so far, at: {}", what, make.objdir.filename().string(),
                 elapsed.count() / 1000, last_line(make.log));
  };
  spdlog::debug("kbuild: {}", base::describe_argv(cmd.argv));
  return base::run(cmd);
}

Result<std::string> make_query(const KernelMake& make, const std::string& target) {
  auto argv = make_argv(make, {target}, 0);
  argv.insert(argv.begin() + 1, "-s");
  auto cmd = make_command(make, std::move(argv));
  cmd.stderr_path = make.log;
  cmd.append = true;
  BISECTD_TRY_ASSIGN(auto status, base::run_checked(cmd, ErrorCode::infra));
  return std::string(base::trim(status.out));
}

std::map<std::string, std::string> ccache_env(const fs::path& worktree, const fs::path& objdir,
                                              const fs::path& cache_dir) {
  std::map<std::string, std::string> env{{"CCACHE_DIR", (cache_dir / "ccache").string()}};
  fs::path common;
  auto a = worktree.begin();
  auto b = objdir.begin();
  for (; a != worktree.end() && b != objdir.end() && *a == *b; ++a, ++b) {
    common /= *a;
  }
  // "/" would rewrite system header paths too; then ccache only hits for identical paths.
  if (!common.empty() && common != common.root_path()) {
    env["CCACHE_BASEDIR"] = common.string();
  }
  return env;
}

} // namespace bisectd::kbuild
