#pragma once
// Carries out one queued test request on one machine: checkout → build (or reuse) → visit → store.
// Runs on a worker thread; everything it learns goes to the store, so the scheduler can recompute from there.

#include "daemon/context.hpp"

#include <atomic>

namespace bisectd::daemon {

enum class RequestOutcome { done, failed, requeued };

// Executes `request` on `slot`'s machine. Never throws; failures are stored on the request.
RequestOutcome run_request(Context& context, MachineSlot& slot, const storage::RequestRow& request);

// The recipe a request builds: the job's, adjusted for verification variants ("layout" forces alignment).
kbuild::Recipe recipe_for(const Job& job, const std::string& variant);

// Checks `commit` out in the tree's worktree and builds it with the job's recipe for `variant` (or reuses the
// stored build), recording a new build in the cost history and the builds table. The caller holds the tree's
// worktree lock; `cancel` stops the build (an infra outcome, not stored). Shared by visits and prebuilds; a
// `background` build (a prebuild) runs at idle CPU priority and its time is not taken as this lab's build time.
Result<kbuild::BuildResult> build_in_worktree(Context& context, const Job& job, const std::string& tree,
                                             const std::string& commit, const std::string& variant,
                                             const std::atomic<bool>* cancel, bool background = false);

// A build that failed for the commit's own reasons: flags (job, commit, variant) unbuildable, so bisections skip it.
void flag_unbuildable(Context& context, const std::string& job, const std::string& commit, const std::string& variant,
                      const std::string& message);

} // namespace bisectd::daemon
