#pragma once
// Recipe `kernel`: out-of-tree kernel builds (make O=...) with one build directory per (tree, recipe
// hash) reused incrementally across commits, so a commit costs what its changed files cost (kbuild
// decides by mtimes and command lines; the worktree checkout keeps unchanged files' mtimes).
//
// Steps: config → every wanted option must have survived olddefconfig → make bzImage [modules] through
// ccache with LOCALVERSION=-g<sha12> → kernelrelease → artifacts (bzImage, config, System.map[,
// modules.tar.gz]) and build.log into the build store.
// Config: the first build in a build dir makes its reference config (base config from a make target
// such as tinyconfig or from a file, + fragment + extra options, olddefconfig) and keeps it in the dir;
// every build starts from that reference and runs olddefconfig on it (like LKP's fixed per-job config),
// which saves re-running the make target (~12 s) per commit.

#include "kbuild/build_store.hpp"
#include "kbuild/builder.hpp"
#include "kbuild/kconfig.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace bisectd::kbuild {

class KernelBuilder : public Builder {
public:
  // `store` must outlive the builder. `build_root` holds the reusable build dirs (created on demand).
  KernelBuilder(BuildStore& store, std::filesystem::path build_root);

  // Reuses a stored result (reused=true), else builds under an exclusive lock of the build dir.
  // A compile error → failed (stored); timeout, cancel, a signal, disk full or OOM → infra (not stored).
  // Errors: not a kernel recipe, bad fragment, a fragment option lost by olddefconfig (invalid_config,
  // naming every such option), or a store/I/O failure.
  Result<BuildResult> build(const BuildRequest& request) override;

  // The out-of-tree build dir of (tree, recipe hash, worktree): <build_root>/<tree>-<recipe hash>-<path hash>.
  // kbuild keeps absolute source paths in it, so daemons with different worktree paths (other data dirs)
  // get their own dirs instead of wiping each other's; a stable worktree per tree keeps it incremental.
  [[nodiscard]] std::filesystem::path build_dir_for(const std::string& tree, const std::string& recipe_hash,
                                                    const std::filesystem::path& worktree) const;

  // The options the build must end up with: fragment file, then extra options, then the builder's own
  // (`# CONFIG_LOCALVERSION_AUTO is not set`: the release must be exactly version + our stamp).
  static Result<std::vector<KconfigOption>> wanted_options(const Recipe& recipe);

private:
  Result<BuildResult> build_locked(const BuildRequest& request, const std::string& recipe_hash);

  BuildStore& m_store;
  std::filesystem::path m_build_root;
};

} // namespace bisectd::kbuild
