#pragma once
// The make invocations of one kernel build: every call shares the source tree, the out-of-tree build
// dir (O=), ARCH, the compiler (ccache gcc), the LOCALVERSION stamp, KCFLAGS and one deadline.

#include "base/error.hpp"
#include "base/process.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::kbuild {

struct KernelMake {
  std::filesystem::path worktree; // the kernel source (srctree), checked out at the commit
  std::filesystem::path objdir;   // O=: reused across commits of one (tree, recipe hash)
  std::string arch = "x86_64";
  std::string compiler = "gcc";                   // "ccache gcc" when ccache is installed
  std::string localversion;                       // "-g<sha12>": appended to the release by setlocalversion
  std::string kcflags;                            // KCFLAGS=, omitted when empty
  std::map<std::string, std::string> env;         // recipe env + ccache settings
  std::filesystem::path log;                      // make's output is appended here
  std::chrono::steady_clock::time_point deadline; // the recipe timeout, for all calls together
  const std::atomic<bool>* cancel = nullptr;
  bool idle_priority = false; // a background build: SCHED_IDLE (base::Command)
  // make runs sandboxed (base/sandbox.hpp): worktree (but its .git), objdir and CCACHE_DIR are writable, and these.
  std::vector<std::filesystem::path> writable;
};

// What an ARCH builds and where the boot image lands.
struct KernelArch {
  std::string_view arch;
  std::string_view image_target; // bzImage
  std::string_view image_path;   // arch/x86/boot/bzImage, relative to objdir
};

// The table entry of `arch`; error (invalid_config) for an architecture the builder does not know.
Result<KernelArch> kernel_arch(std::string_view arch);

// The argv of `make <targets>` for `make` (pure; `jobs` ≤ 0 leaves -j out).
std::vector<std::string> make_argv(const KernelMake& make, const std::vector<std::string>& targets, int jobs);

// Runs make with its output appended to make.log and the time left until make.deadline (a passed
// deadline gives a timed-out status without running). Errors: make could not start, or cancel.
Result<base::ExitStatus> run_make(const KernelMake& make, const std::vector<std::string>& targets, int jobs = 0);

// Runs `make -s <target>` and returns its trimmed stdout (e.g. kernelrelease). Error when it fails.
Result<std::string> make_query(const KernelMake& make, const std::string& target);

// ccache settings for a build of `worktree` in `objdir`: CCACHE_DIR under `cache_dir`, and CCACHE_BASEDIR
// = their deepest common directory, so builds of equally laid-out trees share cache hits.
std::map<std::string, std::string> ccache_env(const std::filesystem::path& worktree,
                                              const std::filesystem::path& objdir,
                                              const std::filesystem::path& cache_dir);

} // namespace bisectd::kbuild
