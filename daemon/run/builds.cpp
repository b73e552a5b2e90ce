#include "daemon/run/builds.hpp"

#include "base/strings.hpp"
#include "daemon/core/requests.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::daemon::run {

namespace {

std::string outcome_name(kbuild::BuildOutcome outcome) {
  switch (outcome) {
  case kbuild::BuildOutcome::ok: return "ok";
  case kbuild::BuildOutcome::failed: return "failed";
  case kbuild::BuildOutcome::infra: return "infra";
  }
  return "infra";
}

} // namespace

kbuild::Recipe recipe_for(const Job& job, const std::string& variant) {
  auto recipe = job.build;
  if (variant == "layout-kcflags" && recipe.kind == kbuild::RecipeKind::kernel) {
    // Verification fallback for kernels that lack CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B (before v5.9, where the
    // "layout" build fails with invalid_config): the same alignment by compiler flag.
    recipe.kcflags += (recipe.kcflags.empty() ? "" : " ") + std::string("-falign-functions=64");
  }
  if (variant == "layout") {
    if (recipe.kind == kbuild::RecipeKind::kernel) {
      recipe.extra_options.push_back("CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y");
    } else {
      for (const auto& [key, value] : job.verify.layout_env) {
        recipe.env[key] = value;
      }
    }
  }
  return recipe;
}

std::optional<kbuild::BuildResult> Builds::stored(const Job& job, const std::string& commit,
                                                  const std::string& variant) const {
  auto hash = recipe_for(job, variant).hash();
  if (!hash) {
    return std::nullopt;
  }
  return m_store.lookup(commit, *hash);
}

Result<kbuild::BuildResult> Builds::for_visit(const Job& job, const std::string& tree, const std::string& commit,
                                              const std::string& variant, const std::atomic<bool>* cancel) {
  BISECTD_TRY_ASSIGN(auto hash, recipe_for(job, variant).hash());
  auto usable = [&]() -> std::optional<kbuild::BuildResult> {
    auto stored = m_store.lookup(commit, hash);
    if (!stored || stored->outcome == kbuild::BuildOutcome::ok) {
      return stored;
    }
    auto flags = m_samples.flags(flag_key(job, commit, variant));
    return flags && flags->is_verdict(storage::CommitFlag::unbuildable) ? stored : std::nullopt;
  };
  if (auto stored = usable()) {
    return *stored; // never rebuilt, never checked out again
  }
  std::lock_guard lock(m_trees.worktree_lock(tree));
  if (auto stored = usable()) {
    return *stored; // built while this visit waited for the worktree (a prebuild of the same commit)
  }
  BISECTD_TRY(m_store.forget_failure(commit, hash)); // failed once: the second build decides
  return in_worktree(job, tree, commit, variant, cancel);
}

Result<kbuild::BuildResult> Builds::in_worktree(const Job& job, const std::string& tree, const std::string& commit,
                                                const std::string& variant, const std::atomic<bool>* cancel,
                                                bool background) {
  auto recipe = recipe_for(job, variant);
  kbuild::BuildRequest request{tree, commit, m_trees.worktree_dir(tree), recipe, cancel, background};
  BISECTD_TRY(m_trees.with_repo(tree, [&](vcs::Repo& repo) { return repo.checkout(commit, request.worktree); }));
  spdlog::info("build {} {} for job {}{}", tree, base::short_sha(commit), job.name,
               variant.empty() ? "" : " (" + variant + ")");
  auto& builder = recipe.kind == kbuild::RecipeKind::kernel ? m_builders.kernel : m_builders.command;
  BISECTD_TRY_ASSIGN(auto result, builder.build(request));
  if (!result.reused) {
    if (result.outcome == kbuild::BuildOutcome::ok && !background) {
      m_costs.add_build(job.name, result.seconds);
    }
    (void)m_samples.record_build(
      {job.name, commit, variant, outcome_name(result.outcome), result.seconds, result.log_path.string()});
  }
  return result;
}

Result<std::int64_t> Builds::flag_unbuildable(const Job& job, const std::string& commit, const std::string& variant,
                                              const std::string& message) {
  return m_samples.add_flag(flag_key(job, commit, variant), storage::CommitFlag::unbuildable, message);
}

} // namespace bisectd::daemon::run
