#pragma once
// Carries out one queued test request on one machine: build (or reuse) → visit → store. Runs on a lab thread;
// everything it learns goes to the store, so the scheduler can recompute from there.

#include "daemon/core/job_catalog.hpp"
#include "daemon/core/wake.hpp"
#include "daemon/run/builds.hpp"
#include "daemon/run/cost_history.hpp"
#include "daemon/run/quarantine.hpp"
#include "daemon/run/retry_policy.hpp"
#include "lab/machine.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"

#include <atomic>
#include <filesystem>
#include <optional>

namespace bisectd::daemon::run {

enum class RequestOutcome { done, failed, requeued };

class VisitRunner {
public:
  // Logs of request N go to request_log_dir(`data_dir`, N). `stopping` cancels builds and visits (their requests go
  // back to the queue); `wake` is called when the build is done (the tree's build slot is free for a prebuild).
  VisitRunner(storage::QueueStore& queue, storage::SampleStore& samples, JobCatalog& jobs, Builds& builds,
              CostHistory& costs, std::filesystem::path data_dir, const std::atomic<bool>& stopping, Wake wake)
      : m_queue(queue), m_samples(samples), m_jobs(jobs), m_builds(builds), m_costs(costs),
        m_data_dir(std::move(data_dir)), m_stopping(stopping), m_wake(std::move(wake)) {}

  // Executes `request` on `machine`. Never throws; failures are stored on the request, retried with backoff while
  // they may pass (retry_policy.hpp).
  RequestOutcome run(lab::Machine& machine, const storage::RequestRow& request);
  // Counts every visit's outcome there (null: no quarantine).
  void set_quarantine(Quarantine* quarantine) { m_quarantine = quarantine; }

private:
  RequestOutcome run_unguarded(lab::Machine& machine, const storage::RequestRow& request);
  // Stores the failure: queued again (soon, or with backoff) while attempts are left and it may pass or is
  // unconfirmed, else failed for good (retry_policy.hpp).
  RequestOutcome fail(const storage::RequestRow& request, const Error& error, FailureKind kind);
  RequestOutcome commit_failure(const storage::RequestRow& request, Error error, const Result<std::int64_t>& count);
  // Records a failed attempt, writing again while the store refuses (disk full, locked).
  void store_failure(std::int64_t id, const std::string& code, const std::string& message,
                     std::optional<std::int64_t> retry_at, const std::string& elsewhere_than);
  RequestOutcome after_failed_build(const Job& job, const storage::RequestRow& request,
                                    const kbuild::BuildResult& build);
  RequestOutcome after_failed_visit(const Job& job, const storage::RequestRow& request, const lab::VisitResult& visit);
  RequestOutcome after_failed_runs(const Job& job, const storage::RequestRow& request, const lab::VisitResult& visit);
  RequestOutcome store_samples(const Job& job, const storage::RequestRow& request, const std::string& machine,
                               const lab::VisitResult& visit);
  void add_lab_handle(lab::VisitRequest& visit, const storage::RequestRow& request,
                      const std::filesystem::path& artifact_dir);
  void record_visit_cost(const Job& job, std::chrono::steady_clock::time_point started,
                         const Result<lab::VisitResult>& visit);
  void record_machine_time(const storage::RequestRow& request, std::chrono::steady_clock::time_point started);

  storage::QueueStore& m_queue;
  storage::SampleStore& m_samples;
  JobCatalog& m_jobs;
  Builds& m_builds;
  CostHistory& m_costs;
  std::filesystem::path m_data_dir;
  const std::atomic<bool>& m_stopping;
  Wake m_wake;
  Quarantine* m_quarantine = nullptr;
};

} // namespace bisectd::daemon::run
