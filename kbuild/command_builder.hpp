#pragma once
// Recipe `command`: runs the job's build argv in the worktree and keeps the declared artifacts.

#include "kbuild/build_store.hpp"
#include "kbuild/builder.hpp"

namespace bisectd::kbuild {

class CommandBuilder : public Builder {
public:
  // `store` must outlive the builder; it may be shared with other builders and threads.
  explicit CommandBuilder(BuildStore& store);

  // Reuses a stored result (reused=true) or runs recipe.command in the worktree with the recipe's
  // timeout and env, the output going to the build log. Exit 0 with every artifact present → ok;
  // a non-zero exit or a missing artifact → failed; timeout, cancel, a signal or a spawn failure →
  // infra (not stored). Errors: the recipe is not a valid `command` recipe, or the store failed.
  Result<BuildResult> build(const BuildRequest& request) override;

private:
  BuildStore& m_store;
};

} // namespace bisectd::kbuild
