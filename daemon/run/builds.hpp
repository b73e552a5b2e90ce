#pragma once
// Builds for the daemon: the recipe a request builds (the job's, adjusted for verification variants), checkout +
// build in the tree's worktree through the kbuild::Builder of the recipe's kind, the stored builds, and what a
// build tells the rest of the daemon (the builds table, this lab's build time, an unbuildable commit).

#include "daemon/core/job.hpp"
#include "daemon/core/tree_repos.hpp"
#include "daemon/run/cost_history.hpp"
#include "kbuild/build_store.hpp"
#include "kbuild/builder.hpp"
#include "storage/sample_store.hpp"

#include <atomic>
#include <optional>
#include <string>

namespace bisectd::daemon::run {

// The recipe a request builds: the job's, adjusted for verification variants ("layout" forces alignment).
kbuild::Recipe recipe_for(const Job& job, const std::string& variant);

// One builder per recipe kind.
struct Builders {
  kbuild::Builder& command;
  kbuild::Builder& kernel;
};

class Builds {
public:
  Builds(TreeRepos& trees, kbuild::BuildStore& store, storage::SampleStore& samples, CostHistory& costs,
         Builders builders)
      : m_trees(trees), m_store(store), m_samples(samples), m_costs(costs), m_builders(builders) {}

  // The stored build of (commit, the job's recipe for `variant`), if any (success or failure).
  [[nodiscard]] std::optional<kbuild::BuildResult> stored(const Job& job, const std::string& commit,
                                                          const std::string& variant = "") const;

  // The build a visit of `commit` needs: stored, or checked out and built under the worktree lock (a prebuild of
  // the same commit may have stored it while the visit waited). A stored failure that is no verdict yet (flagged
  // fewer than CommitFlags::k_failures_to_skip times) is built again. `cancel` stops the build (infra, not stored).
  Result<kbuild::BuildResult> for_visit(const Job& job, const std::string& tree, const std::string& commit,
                                        const std::string& variant, const std::atomic<bool>* cancel);

  // Checks `commit` out in the tree's worktree and builds it (or reuses the stored build), recording a new build
  // in the cost history and the builds table. The caller holds the tree's worktree lock. A `background` build (a
  // prebuild) runs at idle CPU priority and its time is not taken as this lab's build time.
  Result<kbuild::BuildResult> in_worktree(const Job& job, const std::string& tree, const std::string& commit,
                                          const std::string& variant, const std::atomic<bool>* cancel,
                                          bool background = false);

  // A build that failed for the commit's own reasons: raises (job, commit, variant)'s unbuildable flag and returns
  // its count. Bisections skip the commit once the count is a verdict (CommitFlags::k_failures_to_skip).
  Result<std::int64_t> flag_unbuildable(const Job& job, const std::string& commit, const std::string& variant,
                                        const std::string& message);

  TreeRepos& trees() { return m_trees; }
  [[nodiscard]] const kbuild::BuildStore& store() const { return m_store; }

private:
  TreeRepos& m_trees;
  kbuild::BuildStore& m_store;
  storage::SampleStore& m_samples;
  CostHistory& m_costs;
  Builders m_builders;
};

} // namespace bisectd::daemon::run
