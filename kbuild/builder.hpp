#pragma once
// Builds one commit of a tree with a job's recipe and keeps the result in the build store.
// A (commit, recipe hash) is built at most once: a stored success or a stored build failure is reused.

#include "base/error.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace bisectd::kbuild {

enum class RecipeKind { command, kernel };

// What to build, from the job file's `build:` section. Paths are absolute (resolved by the job loader).
struct Recipe {
  RecipeKind kind = RecipeKind::command;
  std::chrono::seconds timeout{3600};
  std::map<std::string, std::string> env; // extra environment for the build
  // recipe `command`: argv run in the worktree; `artifacts` are paths relative to the worktree
  std::vector<std::string> command;
  std::vector<std::string> artifacts;
  // recipe `kernel`
  std::string config;                     // a make target (tinyconfig, defconfig) or an absolute config file
  std::filesystem::path fragment;         // merged on top, then olddefconfig; may be empty
  std::vector<std::string> extra_options; // extra fragment lines, e.g. CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y
  std::string kcflags;                    // KCFLAGS, e.g. -falign-functions=64
  std::string arch = "x86_64";
  bool modules = false;

  // Stable hash of everything that changes the output (the fragment's *content*, not its path).
  [[nodiscard]] Result<std::string> hash() const;
};

struct BuildRequest {
  std::string tree;   // tree name: one kernel build dir per (tree, recipe hash)
  std::string commit; // full sha; the worktree is already checked out at it
  std::filesystem::path worktree;
  Recipe recipe;
  const std::atomic<bool>* cancel = nullptr;
  bool background = false; // speculative (a prebuild): run the compiler at idle CPU priority
};

enum class BuildOutcome {
  ok,
  failed, // the commit does not build: skip it in bisection, never retry by default
  infra,  // our side failed (disk full, killed, timeout): retry later
};

struct BuildResult {
  BuildOutcome outcome = BuildOutcome::ok;
  std::filesystem::path artifact_dir; // holds the declared artifacts (empty unless ok)
  std::filesystem::path log_path;     // the build log, kept in every outcome
  std::string kernel_release;         // kernel recipe: the `uname -r` the built kernel will print
  std::string message;                // one line: why it failed
  std::string fingerprint;            // ok builds: kbuild/fingerprint.hpp digest of the binary; empty = unknown
  double seconds = 0;                 // wall time of the build (0 when reused)
  bool reused = false;                // true when taken from the build store without building
};

class Builder {
public:
  virtual ~Builder() = default;
  // Builds (or reuses) `request`. Errors only for problems outside the commit (bad recipe, I/O).
  virtual Result<BuildResult> build(const BuildRequest& request) = 0;
};

} // namespace bisectd::kbuild
