#include "daemon/run/visit_runner.hpp"

#include "base/clock.hpp"
#include "base/fs.hpp"
#include "base/strings.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/run/retry_policy.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace bisectd::daemon::run {

namespace {

constexpr std::chrono::milliseconds k_stop_poll{100};

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
    s.metrics = run.metrics;
    s.verification = request.purpose == storage::Purpose::verify;
    s.log_path = run.log_path.string();
    samples.push_back(std::move(s));
  }
  return samples;
}

// What the visit says about its machine: its outcome, or (every run timed out) a box that may hang.
void count_on_machine(Quarantine& quarantine, const lab::Machine& machine, const std::string& commit,
                      const lab::VisitResult& visit) {
  bool all_timed_out = visit.outcome == lab::VisitOutcome::ok && !visit.runs.empty() &&
                       std::ranges::all_of(visit.runs, [](const lab::RunResult& run) { return run.timed_out; });
  if (all_timed_out) {
    quarantine.on_timeouts(machine.spec().name, commit, visit.runs.front().error, machine.quarantine_after());
  } else {
    quarantine.on_visit(machine.spec().name, visit.outcome, visit.message, machine.quarantine_after());
  }
}

} // namespace

// Bounded by store_retry_wait's budget; a daemon stop ends it at once (the restart requeues the request).
void VisitRunner::store_failure(std::int64_t id, const std::string& code, const std::string& message,
                                std::optional<std::int64_t> retry_at, const std::string& elsewhere_than) {
  std::chrono::milliseconds waited{0};
  for (int tries = 1;; ++tries) {
    auto stored = m_queue.fail_request(id, code, message, retry_at, elsewhere_than);
    if (stored) {
      if (tries > 1) {
        spdlog::info("request {}: its failure stored at try {}", id, tries);
      }
      return;
    }
    auto wait = store_retry_wait(tries, waited);
    if (tries == 1 || !wait) {
      spdlog::error("request {}: the failure could not be stored: {}{}", id, stored.error().message,
                    wait ? " (trying again)" : " (given up: the next start queues it again)");
    }
    if (!wait) {
      return;
    }
    for (auto slept = std::chrono::milliseconds(0); slept < *wait && !m_stopping; slept += k_stop_poll) {
      std::this_thread::sleep_for(k_stop_poll);
    }
    waited += *wait;
    if (m_stopping) {
      return;
    }
  }
}

RequestOutcome VisitRunner::fail(const storage::RequestRow& request, const Error& error, FailureKind kind) {
  auto decision = after_failure(request, kind, m_stopping);
  auto code = std::string(to_string(error.code));
  auto message = error.message;
  if (decision.flag_commit) {
    message += " (attempt " + std::to_string(request.attempts) + " of " + std::to_string(k_max_attempts) + ": skipped)";
    if (auto job = m_jobs.get(request.job)) {
      (void)m_samples.add_flag(flag_key(**job, request.commit, request.variant), storage::CommitFlag::infra, message);
    }
  }
  std::optional<std::int64_t> retry_at;
  if (decision.retry_after) {
    retry_at = base::unix_now() + decision.retry_after->count();
    message += " (retry in " + std::to_string(decision.retry_after->count()) + "s)";
  }
  spdlog::warn("request {} ({} {}): {}: {}", request.id, to_string(request.purpose), base::short_sha(request.commit),
               code, message);
  // The commit's own failure seen once: another machine of the group may look again at once, this one after the delay.
  store_failure(request.id, code, message, retry_at, kind == FailureKind::unconfirmed ? request.machine : "");
  return retry_at ? RequestOutcome::requeued : RequestOutcome::failed;
}

// The commit's own failure (`flag`) is a verdict only when a second attempt failed the same way: the first is tried
// again on a new build or boot. `count`: the flag's count with this failure (an error: unknown, so not a verdict).
RequestOutcome VisitRunner::commit_failure(const storage::RequestRow& request, Error error,
                                           const Result<std::int64_t>& count) {
  bool verdict = count && *count >= storage::CommitFlags::k_failures_to_skip;
  if (!verdict) {
    error.message += " (failure 1 of " + std::to_string(storage::CommitFlags::k_failures_to_skip) +
                     ": tried again before the commit is skipped)";
  }
  return fail(request, error, verdict ? FailureKind::final : FailureKind::unconfirmed);
}

RequestOutcome VisitRunner::after_failed_build(const Job& job, const storage::RequestRow& request,
                                               const kbuild::BuildResult& build) {
  if (build.outcome == kbuild::BuildOutcome::failed) {
    auto count = m_builds.flag_unbuildable(job, request.commit, request.variant, build.message);
    return commit_failure(request, Error{ErrorCode::build_failed, build.message}, count);
  }
  return fail(request, Error{ErrorCode::infra, "build: " + build.message}, FailureKind::passing);
}

RequestOutcome VisitRunner::after_failed_visit(const Job& job, const storage::RequestRow& request,
                                               const lab::VisitResult& visit) {
  if (visit.outcome == lab::VisitOutcome::boot_failed) {
    auto count = m_samples.add_flag(flag_key(job, request.commit, request.variant), storage::CommitFlag::unbootable,
                                    visit.message);
    return commit_failure(
      request, Error{ErrorCode::boot_failed, visit.message + " (console: " + visit.console_log.string() + ")"}, count);
  }
  return fail(request, Error{ErrorCode::infra, visit.message}, FailureKind::passing);
}

// No run gave a sample. Runs that timed out may have met a machine that hung: retried like infra (bounded), never
// flagged. A run that failed otherwise speaks against the commit, once it happens again.
RequestOutcome VisitRunner::after_failed_runs(const Job& job, const storage::RequestRow& request,
                                              const lab::VisitResult& visit) {
  auto no_sample = "no run gave " + job.metrics.primary;
  auto failed = std::ranges::find_if(visit.runs, [](const lab::RunResult& run) { return !run.ok && !run.timed_out; });
  if (visit.runs.empty()) {
    return fail(request, Error{ErrorCode::infra, no_sample + ": the visit made no runs"}, FailureKind::passing);
  }
  if (failed == visit.runs.end()) {
    return fail(request, Error{ErrorCode::timeout, no_sample + ": " + visit.runs.front().error}, FailureKind::passing);
  }
  auto count = m_samples.add_flag(flag_key(job, request.commit, request.variant), storage::CommitFlag::unrunnable,
                                  "run " + std::to_string(failed->index) + ": " + failed->error);
  return commit_failure(request, Error{ErrorCode::benchmark_failed, no_sample + ": " + failed->error}, count);
}

// The boot part of a successful visit is its wall time minus the runs' own time.
void VisitRunner::record_visit_cost(const Job& job, std::chrono::steady_clock::time_point started,
                                    const Result<lab::VisitResult>& visit) {
  if (!visit || visit->outcome != lab::VisitOutcome::ok || visit->runs.empty()) {
    return;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  double runs = 0;
  for (const auto& run : visit->runs) {
    runs += run.seconds;
  }
  m_costs.add_visit(job.name, wall - runs, runs, static_cast<int>(visit->runs.size()));
}

// Every visit held its machine, whatever came of it: failed boots and interrupted visits are machine time too.
void VisitRunner::record_machine_time(const storage::RequestRow& request,
                                      std::chrono::steady_clock::time_point started) {
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (auto added = m_queue.add_machine_time(request.id, wall); !added) {
    spdlog::warn("request {}: machine time of the visit not stored: {}", request.id, added.error().message);
  }
}

RequestOutcome VisitRunner::store_samples(const Job& job, const storage::RequestRow& request,
                                          const std::string& machine, const lab::VisitResult& visit) {
  auto samples = to_samples(request, machine, visit);
  auto full = std::ranges::find_if(visit.runs, [](const lab::RunResult& run) { return run.disk_full; });
  if (samples.empty() && full != visit.runs.end()) {
    // A full disk is ours to fix, not the commit's doing: retried (bounded) like any infra failure, never flagged.
    return fail(request, Error{ErrorCode::infra, "run " + std::to_string(full->index) + ": " + full->error},
                FailureKind::passing);
  }
  if (samples.empty()) {
    return after_failed_runs(job, request, visit);
  }
  if (auto stored = m_queue.finish_request(request.id, samples); !stored) {
    return fail(request, stored.error(), FailureKind::passing);
  }
  if (auto forgotten = m_samples.forget_single_failures(flag_key(job, request.commit, request.variant)); !forgotten) {
    spdlog::warn("request {}: an earlier single failure of {} stays counted: {}", request.id,
                 base::short_sha(request.commit), forgotten.error().message);
  }
  spdlog::info("request {} done: {} {} x{} on {}", request.id, to_string(request.purpose),
               base::short_sha(request.commit), samples.size(), machine);
  return RequestOutcome::done;
}

// A backend whose visit outlives the daemon (LAVA) stores its handle through save_handle before it waits; a request
// that comes back with one is resumed on the same machine (claim_request gives it only to that machine).
void VisitRunner::add_lab_handle(lab::VisitRequest& visit, const storage::RequestRow& request,
                                 const std::filesystem::path& artifact_dir) {
  visit.resume = request.lab_handle;
  visit.save_handle = [this, id = request.id](const std::string& handle) { return m_queue.set_lab_handle(id, handle); };
  visit.metadata = {{"request", std::to_string(request.id)},
                    {"build", artifact_dir.filename().string()},
                    {"purpose", std::string(to_string(request.purpose))},
                    {"tree", request.tree},
                    {"job", request.job}};
  if (request.bisection_id != 0) {
    visit.metadata["bisection"] = std::to_string(request.bisection_id);
  }
}

RequestOutcome VisitRunner::run(lab::Machine& machine, const storage::RequestRow& request) {
  try {
    return run_unguarded(machine, request);
  } catch (const std::exception& e) {
    // A bug met on this request's data: bounded like any infra failure, so it cannot spin.
    return fail(request, Error{ErrorCode::infra, std::string("internal error: ") + e.what()}, FailureKind::passing);
  }
}

RequestOutcome VisitRunner::run_unguarded(lab::Machine& machine, const storage::RequestRow& request) {
  auto job = m_jobs.get(request.job);
  if (!job) {
    return fail(request, job.error(), FailureKind::final);
  }
  auto build = m_builds.for_visit(**job, request.tree, request.commit, request.variant, &m_stopping);
  if (!build) {
    auto kind = build.error().code != ErrorCode::invalid_config ? FailureKind::passing : FailureKind::final;
    return fail(request, build.error().context("build " + base::short_sha(request.commit)), kind);
  }
  if (build->outcome != kbuild::BuildOutcome::ok) {
    return after_failed_build(**job, request, *build);
  }
  (void)m_queue.set_request_state(request.id, storage::RequestState::running);
  if (m_wake) {
    m_wake(); // the tree's build slot is free now: the scheduler may prebuild the next round's picks
  }
  auto log_dir = request_log_dir(m_data_dir, request.id);
  (void)base::make_dirs(log_dir);
  lab::VisitRequest visit_request;
  visit_request.commit = request.commit;
  visit_request.artifact_dir = build->artifact_dir;
  visit_request.kernel_release = build->kernel_release;
  visit_request.run = (*job)->run;
  visit_request.runs = static_cast<int>(request.runs);
  visit_request.log_dir = log_dir;
  visit_request.cancel = &m_stopping;
  add_lab_handle(visit_request, request, build->artifact_dir);
  auto visit_started = std::chrono::steady_clock::now();
  auto visit = machine.visit(visit_request);
  record_visit_cost(**job, visit_started, visit);
  record_machine_time(request, visit_started);
  if (m_stopping) { // a handle stays stored: the lab's visit goes on and is followed after the restart
    return fail(request, Error{ErrorCode::cancelled, "daemon stopping"}, FailureKind::passing);
  }
  if (!request.lab_handle.empty() || visit_request.save_handle) {
    (void)m_queue.set_lab_handle(request.id, "");
  }
  if (!visit) {
    return fail(request, visit.error().context("visit " + machine.spec().name), FailureKind::final);
  }
  if (visit->outcome == lab::VisitOutcome::cancelled) {
    spdlog::info("request {}: {}: back to the queue", request.id, visit->message);
    (void)m_queue.requeue_request(request.id, visit->message);
    return RequestOutcome::requeued;
  }
  if (m_quarantine != nullptr) {
    count_on_machine(*m_quarantine, machine, request.commit, *visit);
  }
  if (visit->outcome != lab::VisitOutcome::ok) {
    return after_failed_visit(**job, request, *visit);
  }
  return store_samples(**job, request, machine.spec().name, *visit);
}

} // namespace bisectd::daemon::run
