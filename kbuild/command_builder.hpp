#pragma once
// Recipe `command`: runs the job's build argv in the worktree and keeps the declared artifacts.

#include "kbuild/build_store.hpp"
#include "kbuild/builder.hpp"

#include <cstdint>

namespace bisectd::kbuild {

// A file system with less than this left is full for a build: min(64 MiB, 1 % of its size). A build that fails
// on one did not fail on its own code (the next try, with space freed, may pass), so it is infra, not stored.
bool disk_nearly_full(std::uintmax_t available, std::uintmax_t capacity);

class CommandBuilder : public Builder {
public:
  // `store` must outlive the builder; it may be shared with other builders and threads.
  explicit CommandBuilder(BuildStore& store);

  // Reuses a stored result (reused=true) or runs recipe.command in the worktree with the recipe's
  // timeout and env, the output going to the build log. Exit 0 with every artifact present → ok;
  // a non-zero exit, a missing artifact or one refused as hostile (a fifo or device, a file over 2 GiB: artifacts
  // are copied following no link, symlinks stay symlinks) → failed; timeout, cancel, a signal, a spawn failure or a
  // non-zero exit with the worktree's file system full → infra (not stored). Errors: the recipe is not a valid
  // `command` recipe, or the store failed.
  Result<BuildResult> build(const BuildRequest& request) override;

private:
  BuildStore& m_store;
};

} // namespace bisectd::kbuild
