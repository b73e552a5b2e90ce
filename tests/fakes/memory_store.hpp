#pragma once
// An in-memory store with the SQLite store's semantics, for unit tests of the daemon's decisions (no database
// file). Thread-safe like the real one. Rows are kept in vectors in insertion order; ids start at 1.

#include "storage/bisection_store.hpp"
#include "storage/detection_store.hpp"
#include "storage/outbox_store.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"
#include "storage/tree_store.hpp"

#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace bisectd::test {

class MemoryStore final : public storage::TreeStore,
                          public storage::QueueStore,
                          public storage::SampleStore,
                          public storage::DetectionStore,
                          public storage::BisectionStore,
                          public storage::OutboxStore {
public:
  Status add_tree(const storage::TreeRow& tree, const storage::JobRow& job) override;
  Result<std::vector<storage::TreeRow>> trees() override;
  Result<std::optional<storage::TreeRow>> tree(const std::string& name) override;
  Status remove_tree(const std::string& name) override;
  Status update_tree(const storage::TreeRow& tree, const std::optional<storage::JobRow>& job) override;
  Status put_job(const storage::JobRow& job) override;
  Result<std::optional<storage::JobRow>> job(const std::string& name) override;
  Result<std::vector<storage::JobRow>> jobs() override;
  Result<std::optional<storage::HeadRow>> head(const std::string& tree, const std::string& branch) override;
  Status set_watch_error(const std::string& name, const std::string& error) override;
  Status set_head_seen(const std::string& tree, const std::string& branch, const std::string& sha) override;
  Status set_head_tested(const std::string& tree, const std::string& branch, const std::string& sha) override;
  Status set_head_error(const std::string& tree, const std::string& branch, const std::string& error) override;
  Status set_polled(const std::string& name, std::int64_t at) override;

  Result<std::int64_t> enqueue(const storage::RequestRow& request) override;
  Result<std::optional<storage::RequestRow>> claim_request(const std::string& group,
                                                           const std::string& machine) override;
  Status set_request_state(std::int64_t id, storage::RequestState state) override;
  Status finish_request(std::int64_t id, const std::vector<storage::SampleRow>& samples) override;
  Status fail_request(std::int64_t id, const std::string& code, const std::string& message,
                      std::optional<std::int64_t> retry_at, const std::string& elsewhere_than = "") override;
  Result<std::pair<int, int>> requeue_interrupted(int max_attempts) override;
  Status set_lab_handle(std::int64_t id, const std::string& handle) override;
  Status add_machine_time(std::int64_t id, double seconds) override;
  Status requeue_request(std::int64_t id, const std::string& message) override;
  Result<std::int64_t> failed_requests_for(const std::string& job, const std::string& commit,
                                           storage::Purpose purpose) override;
  Result<std::vector<storage::RequestRow>> requests_for_bisection(std::int64_t bisection_id) override;
  Result<std::vector<storage::RequestRow>> requests_for_detection(std::int64_t detection_id) override;
  Result<std::optional<storage::RequestRow>> last_failed_request(const std::string& job, const std::string& commit,
                                                                 storage::Purpose purpose) override;
  Result<std::vector<storage::RequestRow>> queued_requests() override;
  Result<std::vector<storage::RequestRow>> open_requests() override;
  Result<std::optional<storage::RequestRow>> request(std::int64_t id) override;
  Result<std::int64_t> open_requests_for(const std::string& job, const std::string& commit) override;
  Result<std::map<std::string, std::int64_t>> request_counts() override;
  Result<std::vector<std::string>> watched_commits(const std::string& tree, const std::string& job,
                                                   const std::string& group, std::size_t limit) override;
  Result<bool> is_watched(const std::string& tree, const std::string& job, const std::string& group,
                          const std::string& commit) override;

  Result<std::vector<storage::SampleRow>> samples(const std::string& job, const std::vector<std::string>& commits,
                                                  const std::string& variant = "") override;
  Result<std::vector<storage::MetricSample>> metric_samples(const std::string& job,
                                                            const std::vector<std::string>& commits,
                                                            const std::string& metric,
                                                            const std::string& variant = "") override;
  Result<std::vector<storage::MetricSample>> request_metric_samples(const std::vector<std::int64_t>& requests,
                                                                    const std::string& metric) override;
  Result<std::vector<std::pair<std::string, storage::MetricSample>>>
  series_samples(const std::string& tree, const std::string& job, const std::string& group,
                 const std::vector<std::string>& metrics) override;
  Result<std::vector<storage::SampleRow>> samples_for_commit_prefix(const std::string& prefix, const std::string& tree,
                                                                    std::int64_t after_id, std::size_t limit) override;
  Result<std::vector<storage::SampleRow>> samples_for_job(const std::string& job) override;
  Result<std::int64_t> add_flag(const storage::FlagKey& key, storage::CommitFlag flag,
                                const std::string& message) override;
  Result<storage::CommitFlags> flags(const storage::FlagKey& key) override;
  Result<std::vector<storage::FlagRow>> commit_flags(const std::string& prefix) override;
  Status forget_single_failures(const storage::FlagKey& key) override;
  Result<std::int64_t> clear_flags(const std::string& job, const std::string& commit) override;
  Status record_build(const storage::BuildRecord& build) override;
  Result<std::optional<storage::BuildRecord>> last_build(const std::string& job, const std::string& commit,
                                                         const std::string& variant) override;

  Result<std::int64_t> add_detection(const storage::DetectionRow& detection) override;
  Result<std::optional<storage::DetectionRow>> detection(const std::string& tree, const std::string& job,
                                                         const std::string& good, const std::string& bad) override;
  Result<std::vector<storage::DetectionRow>> detections_in_state(storage::DetectionState state) override;
  Result<std::vector<storage::DetectionRow>> detections(const std::string& tree = "") override;
  Status set_detection_state(std::int64_t id, storage::DetectionState state, std::int64_t bisection_id,
                             std::optional<double> change = std::nullopt) override;
  Status update_detection(const storage::DetectionRow& d) override;

  Result<std::int64_t> add_bisection(const storage::BisectionRow& bisection) override;
  Result<std::optional<storage::BisectionRow>> bisection(std::int64_t id) override;
  Result<std::vector<storage::BisectionRow>>
  bisections(const std::string& tree = "", std::optional<storage::BisectionState> state = std::nullopt) override;
  Status update_bisection(const storage::BisectionRow& bisection) override;
  Status exclude_commit(std::int64_t bisection_id, const std::string& commit) override;
  Status add_prebuilt(std::int64_t bisection_id, const std::string& commit) override;
  Result<storage::BisectionCost> bisection_cost(std::int64_t bisection_id) override;
  Status cancel_bisection(std::int64_t bisection_id) override;
  Status fail_bisection(std::int64_t bisection_id, const std::string& reason) override;
  Status retry_bisection(std::int64_t bisection_id) override;
  Result<std::int64_t> delete_bisection(std::int64_t bisection_id, bool purge) override;
  Status add_event(std::int64_t bisection_id, const std::string& message) override;
  Result<std::vector<storage::EventRow>> events(std::int64_t bisection_id) override;
  Status finish_bisection(const storage::BisectionRow& bisection,
                          const std::optional<storage::ReportRow>& report) override;
  Result<std::optional<storage::ReportRow>> report(std::int64_t bisection_id) override;
  Result<std::optional<storage::ReportRow>> first_report(const std::string& tree, const std::string& job,
                                                         const std::string& culprit,
                                                         std::int64_t except_bisection) override;

  Result<std::vector<std::pair<storage::OutboxRow, storage::ReportRow>>> due_mail(std::int64_t now) override;
  Result<bool> mark_mail_sending(std::int64_t outbox_id) override;
  Result<std::vector<std::pair<storage::OutboxRow, storage::ReportRow>>> interrupted_mail() override;
  Status mark_mail_sent(std::int64_t outbox_id) override;
  Result<std::optional<storage::OutboxRow>> report_mail(std::int64_t report_id) override;
  Status mark_mail_failed(std::int64_t outbox_id, const std::string& error, std::int64_t next_attempt_at,
                          bool give_up) override;

  // For tests: every row of a kind, as stored.
  std::vector<storage::RequestRow> all_requests();
  std::vector<storage::ReportRow> all_reports();

private:
  storage::RequestRow* find_request(std::int64_t id);
  storage::BisectionRow* find_bisection(std::int64_t id);
  Status end_running(std::int64_t bisection_id, storage::BisectionState state, const std::string& reason,
                     const std::string& request_code);
  Status update_locked(const storage::BisectionRow& bisection);

  std::recursive_mutex m_mutex;
  std::vector<storage::TreeRow> m_trees;
  std::set<std::string> m_removed;
  std::vector<storage::JobRow> m_jobs;
  std::vector<storage::HeadRow> m_heads;
  std::vector<storage::RequestRow> m_requests;
  std::vector<storage::SampleRow> m_samples;
  std::vector<storage::FlagRow> m_flags;
  std::map<std::int64_t, std::string> m_retry_elsewhere; // request id -> the machine that waits for retry_at
  std::vector<storage::BuildRecord> m_builds;
  std::vector<storage::DetectionRow> m_detections;
  std::vector<storage::BisectionRow> m_bisections;
  std::vector<std::pair<std::int64_t, storage::EventRow>> m_events;
  std::vector<storage::ReportRow> m_reports;
  std::vector<storage::OutboxRow> m_outbox;
  std::int64_t m_now = 1'700'000'000; // a clock that moves one second per write
};

} // namespace bisectd::test
