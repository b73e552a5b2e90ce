#include "daemon/visit_runner.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "kbuild/command_builder.hpp"
#include "kbuild/kernel_builder.hpp"

#include <chrono>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace bisectd::daemon {

namespace {

constexpr int k_max_infra_attempts = 3;
constexpr int k_boot_failures_before_skip = 2; // a commit that fails to boot is retried once, then skipped

RequestOutcome fail(Context& context, const storage::RequestRow& request, const Error& error, bool requeue) {
  requeue = requeue || context.stopping; // a visit cut short by shutdown is redone after the restart
  auto code = std::string(to_string(error.code));
  spdlog::warn("request {} ({} {}): {}: {}", request.id, request.purpose, base::short_sha(request.commit), code,
               error.message);
  (void)context.store->fail_request(request.id, code, error.message, requeue);
  return requeue ? RequestOutcome::requeued : RequestOutcome::failed;
}

bool may_retry(const storage::RequestRow& request) { return request.attempts < k_max_infra_attempts; }

Result<kbuild::BuildResult> build_commit(Context& context, const Job& job, const storage::RequestRow& request) {
  auto recipe = recipe_for(job, request.variant);
  BISECTD_TRY_ASSIGN(auto hash, recipe.hash());
  if (auto stored = context.build_store->lookup(request.commit, hash)) {
    return *stored; // never rebuilt, never checked out again
  }
  std::lock_guard lock(context.trees->worktree_lock(request.tree));
  if (auto stored = context.build_store->lookup(request.commit, hash)) {
    return *stored; // built while this visit waited for the worktree (a prebuild of the same commit)
  }
  return build_in_worktree(context, job, request.tree, request.commit, request.variant, &context.stopping);
}

std::vector<storage::SampleRow> to_samples(const storage::RequestRow& request, const std::string& machine,
                                           const lab::VisitResult& visit) {
  std::vector<storage::SampleRow> samples;
  for (const auto& run : visit.runs) {
    if (!run.ok) {
      continue;
    }
    storage::SampleRow s;
    s.tree = request.tree;
    s.job = request.job;
    s.commit = request.commit;
    s.variant = request.variant;
    s.machine = machine;
    s.boot_id = visit.boot_id;
    s.run = run.index;
    s.metrics_json = nlohmann::json(run.metrics).dump();
    s.verification = request.purpose == "verify";
    s.log_path = run.log_path.string();
    samples.push_back(std::move(s));
  }
  return samples;
}

RequestOutcome handle_build_outcome(Context& context, const Job& job, const storage::RequestRow& request,
                                    const kbuild::BuildResult& build) {
  if (build.outcome == kbuild::BuildOutcome::failed) {
    flag_unbuildable(context, job.name, request.commit, request.variant, build.message);
    return fail(context, request, Error{ErrorCode::build_failed, build.message}, false);
  }
  return fail(context, request, Error{ErrorCode::infra, "build: " + build.message}, may_retry(request));
}

RequestOutcome handle_visit_outcome(Context& context, const Job& job, const storage::RequestRow& request,
                                    const lab::VisitResult& visit) {
  if (visit.outcome == lab::VisitOutcome::boot_failed) {
    auto count = context.store->add_flag(job.name, request.commit, request.variant, "unbootable", visit.message);
    bool retry = count && *count < k_boot_failures_before_skip;
    return fail(context, request, Error{ErrorCode::boot_failed, visit.message + " (console: " +
                                                                   visit.console_log.string() + ")"}, retry);
  }
  return fail(context, request, Error{ErrorCode::infra, visit.message}, may_retry(request));
}

// The boot part of a successful visit is its wall time minus the runs' own time.
void record_visit_cost(Context& context, const Job& job, std::chrono::steady_clock::time_point started,
                       const Result<lab::VisitResult>& visit) {
  if (!visit || visit->outcome != lab::VisitOutcome::ok || visit->runs.empty()) {
    return;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  double runs = 0;
  for (const auto& run : visit->runs) {
    runs += run.seconds;
  }
  context.costs.add_visit(job.name, wall - runs, runs, static_cast<int>(visit->runs.size()));
}

} // namespace

kbuild::Recipe recipe_for(const Job& job, const std::string& variant) {
  auto recipe = job.build;
  if (variant == "layout-kcflags" && recipe.kind == kbuild::RecipeKind::kernel) {
    // Verification fallback (daemon/verify_runs.cpp) for kernels that lack CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B
    // (before v5.9, where the "layout" build fails with invalid_config): the same alignment by compiler flag.
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

Result<kbuild::BuildResult> build_in_worktree(Context& context, const Job& job, const std::string& tree,
                                             const std::string& commit, const std::string& variant,
                                             const std::atomic<bool>* cancel, bool background) {
  auto recipe = recipe_for(job, variant);
  kbuild::BuildRequest build{tree, commit, context.trees->worktree_dir(tree), recipe, cancel, background};
  BISECTD_TRY(context.trees->with_repo(tree, [&](vcs::Repository& repo) {
    return repo.checkout(commit, build.worktree);
  }));
  spdlog::info("build {} {} for job {}{}", tree, base::short_sha(commit), job.name,
               variant.empty() ? "" : " (" + variant + ")");
  kbuild::BuildResult result;
  if (recipe.kind == kbuild::RecipeKind::kernel) {
    kbuild::KernelBuilder builder(*context.build_store, context.config.cache_dir / "kbuild");
    BISECTD_TRY_ASSIGN(result, builder.build(build));
  } else {
    kbuild::CommandBuilder builder(*context.build_store);
    BISECTD_TRY_ASSIGN(result, builder.build(build));
  }
  if (!result.reused) {
    if (result.outcome == kbuild::BuildOutcome::ok && !background) {
      context.costs.add_build(job.name, result.seconds);
    }
    (void)context.store->record_build(job.name, commit, variant,
                                      result.outcome == kbuild::BuildOutcome::ok       ? "ok"
                                      : result.outcome == kbuild::BuildOutcome::failed ? "failed"
                                                                                       : "infra",
                                      result.seconds, result.log_path.string());
  }
  return result;
}

void flag_unbuildable(Context& context, const std::string& job, const std::string& commit, const std::string& variant,
                      const std::string& message) {
  (void)context.store->add_flag(job, commit, variant, "unbuildable", message);
}

RequestOutcome run_request(Context& context, MachineSlot& slot, const storage::RequestRow& request) {
  auto job = context.jobs->get(request.job);
  if (!job) {
    return fail(context, request, job.error(), false);
  }
  auto build = build_commit(context, **job, request);
  if (!build) {
    bool retry = build.error().code != ErrorCode::invalid_config && may_retry(request);
    return fail(context, request, build.error().context("build " + base::short_sha(request.commit)), retry);
  }
  if (build->outcome != kbuild::BuildOutcome::ok) {
    return handle_build_outcome(context, **job, request, *build);
  }
  (void)context.store->set_request_state(request.id, "running");
  if (context.wake) {
    context.wake(); // the tree's build slot is free now: the scheduler may prebuild the next round's picks
  }
  auto log_dir = context.config.data_dir / "logs" / ("request-" + std::to_string(request.id));
  (void)base::make_dirs(log_dir);
  lab::VisitRequest visit_request{request.commit, build->artifact_dir, build->kernel_release, (*job)->run,
                                  static_cast<int>(request.runs), log_dir, &context.stopping};
  auto visit_started = std::chrono::steady_clock::now();
  auto visit = slot.machine->visit(visit_request);
  record_visit_cost(context, **job, visit_started, visit);
  if (!visit) {
    return fail(context, request, visit.error().context("visit " + slot.machine->spec().name), false);
  }
  if (context.stopping) {
    return fail(context, request, Error{ErrorCode::cancelled, "daemon stopping"}, true);
  }
  if (visit->outcome != lab::VisitOutcome::ok) {
    return handle_visit_outcome(context, **job, request, *visit);
  }
  auto samples = to_samples(request, slot.machine->spec().name, *visit);
  if (samples.empty()) {
    (void)context.store->add_flag((*job)->name, request.commit, request.variant, "unrunnable",
                                  visit->runs.empty() ? "no runs" : visit->runs.front().error);
    return fail(context, request,
                Error{ErrorCode::benchmark_failed,
                      "no run gave " + (*job)->metrics.primary + (visit->runs.empty() ? "" : ": " + visit->runs.front().error)},
                false);
  }
  if (auto stored = context.store->finish_request(request.id, samples); !stored) {
    return fail(context, request, stored.error(), true);
  }
  spdlog::info("request {} done: {} {} x{} on {}", request.id, request.purpose, base::short_sha(request.commit),
               samples.size(), slot.machine->spec().name);
  return RequestOutcome::done;
}

} // namespace bisectd::daemon
