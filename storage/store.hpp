#pragma once
// The SQLite store: every query the daemon makes, behind the per-noun interfaces its parts depend on. Each write
// that must be atomic is one transaction here. The connection is private: no SQL is written outside storage/.

#include "base/error.hpp"
#include "storage/bisection_store.hpp"
#include "storage/detection_store.hpp"
#include "storage/machine_store.hpp"
#include "storage/outbox_store.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"
#include "storage/tree_store.hpp"

#include <filesystem>
#include <memory>

namespace bisectd::storage {

class Connection;

class Store final : public TreeStore,
                    public QueueStore,
                    public SampleStore,
                    public DetectionStore,
                    public BisectionStore,
                    public OutboxStore,
                    public MachineStore {
public:
  // Opens or creates DATA_DIR/bisectd.db and migrates it.
  static Result<std::unique_ptr<Store>> open(const std::filesystem::path& file);
  ~Store() override;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  Status add_tree(const TreeRow& tree, const JobRow& job) override;
  Result<std::vector<TreeRow>> trees() override;
  Result<std::optional<TreeRow>> tree(const std::string& name) override;
  Status remove_tree(const std::string& name) override;
  Status update_tree(const TreeRow& tree, const std::optional<JobRow>& job) override;
  Status put_job(const JobRow& job) override;
  Result<std::optional<JobRow>> job(const std::string& name) override;
  Result<std::vector<JobRow>> jobs() override;
  Result<std::optional<HeadRow>> head(const std::string& tree, const std::string& branch) override;
  Status set_watch_error(const std::string& name, const std::string& error) override;
  Status set_head_seen(const std::string& tree, const std::string& branch, const std::string& sha) override;
  Status set_head_tested(const std::string& tree, const std::string& branch, const std::string& sha) override;
  Status set_head_error(const std::string& tree, const std::string& branch, const std::string& error) override;
  Status set_polled(const std::string& name, std::int64_t at) override;

  Result<std::int64_t> enqueue(const RequestRow& request) override;
  Result<std::optional<RequestRow>> claim_request(const std::string& group, const std::string& machine) override;
  Status set_request_state(std::int64_t id, RequestState state) override;
  Status finish_request(std::int64_t id, const std::vector<SampleRow>& samples) override;
  Status fail_request(std::int64_t id, const std::string& code, const std::string& message,
                      std::optional<std::int64_t> retry_at, const std::string& elsewhere_than = "") override;
  Result<std::pair<int, int>> requeue_interrupted(int max_attempts) override;
  Status set_lab_handle(std::int64_t id, const std::string& handle) override;
  Status add_machine_time(std::int64_t id, double seconds) override;
  Status requeue_request(std::int64_t id, const std::string& message) override;
  Result<std::int64_t> failed_requests_for(const std::string& job, const std::string& commit, Purpose purpose) override;
  Result<std::vector<RequestRow>> requests_for_bisection(std::int64_t bisection_id) override;
  Result<std::vector<RequestRow>> requests_for_detection(std::int64_t detection_id) override;
  Result<std::vector<RequestRow>> open_requests() override;
  Result<std::optional<RequestRow>> last_failed_request(const std::string& job, const std::string& commit,
                                                        Purpose purpose) override;
  Result<std::vector<RequestRow>> queued_requests() override;
  Result<std::optional<RequestRow>> request(std::int64_t id) override;
  Result<std::int64_t> open_requests_for(const std::string& job, const std::string& commit) override;
  Result<std::map<std::string, std::int64_t>> request_counts() override;
  Result<std::vector<std::string>> watched_commits(const std::string& tree, const std::string& job,
                                                   const std::string& group, std::size_t limit) override;
  Result<bool> is_watched(const std::string& tree, const std::string& job, const std::string& group,
                          const std::string& commit) override;

  Result<std::vector<SampleRow>> samples(const std::string& job, const std::vector<std::string>& commits,
                                         const std::string& variant = "") override;
  Result<std::vector<MetricSample>> metric_samples(const std::string& job, const std::vector<std::string>& commits,
                                                   const std::string& metric, const std::string& variant = "") override;
  Result<std::vector<MetricSample>> request_metric_samples(const std::vector<std::int64_t>& requests,
                                                           const std::string& metric) override;
  Result<std::vector<std::pair<std::string, MetricSample>>>
  series_samples(const std::string& tree, const std::string& job, const std::string& group,
                 const std::vector<std::string>& metrics) override;
  Result<std::vector<SampleRow>> samples_for_commit_prefix(const std::string& prefix, const std::string& tree,
                                                           std::int64_t after_id, std::size_t limit) override;
  Result<std::vector<SampleRow>> samples_for_job(const std::string& job) override;
  Result<std::int64_t> add_flag(const FlagKey& key, CommitFlag flag, const std::string& message) override;
  Result<CommitFlags> flags(const FlagKey& key) override;
  Result<std::vector<FlagRow>> commit_flags(const std::string& prefix) override;
  Status forget_single_failures(const FlagKey& key) override;
  Result<std::int64_t> clear_flags(const std::string& job, const std::string& commit) override;
  Status record_build(const BuildRecord& build) override;
  Result<std::optional<BuildRecord>> last_build(const std::string& job, const std::string& commit,
                                                const std::string& variant) override;

  Result<std::int64_t> add_detection(const DetectionRow& detection) override;
  Result<std::optional<DetectionRow>> detection(const std::string& tree, const std::string& job,
                                                const std::string& good, const std::string& bad) override;
  Result<std::vector<DetectionRow>> detections_in_state(DetectionState state) override;
  Result<std::vector<DetectionRow>> detections(const std::string& tree = "") override;
  Status set_detection_state(std::int64_t id, DetectionState state, std::int64_t bisection_id,
                             std::optional<double> change = std::nullopt) override;
  Status update_detection(const DetectionRow& d) override;

  Result<std::int64_t> add_bisection(const BisectionRow& bisection) override;
  Result<std::optional<BisectionRow>> bisection(std::int64_t id) override;
  Result<std::vector<BisectionRow>> bisections(const std::string& tree = "",
                                               std::optional<BisectionState> state = std::nullopt) override;
  Status update_bisection(const BisectionRow& bisection) override;
  Status exclude_commit(std::int64_t bisection_id, const std::string& commit) override;
  Status add_prebuilt(std::int64_t bisection_id, const std::string& commit) override;
  Status cancel_bisection(std::int64_t bisection_id) override;
  Status fail_bisection(std::int64_t bisection_id, const std::string& reason) override;
  Status retry_bisection(std::int64_t bisection_id) override;
  Result<std::int64_t> delete_bisection(std::int64_t bisection_id, bool purge) override;
  Result<BisectionCost> bisection_cost(std::int64_t bisection_id) override;
  Status add_event(std::int64_t bisection_id, const std::string& message) override;
  Result<std::vector<EventRow>> events(std::int64_t bisection_id) override;
  Status finish_bisection(const BisectionRow& bisection, const std::optional<ReportRow>& report) override;
  Result<std::optional<ReportRow>> report(std::int64_t bisection_id) override;
  Result<std::optional<ReportRow>> first_report(const std::string& tree, const std::string& job,
                                                const std::string& culprit, std::int64_t except_bisection) override;

  Result<std::vector<std::pair<OutboxRow, ReportRow>>> due_mail(std::int64_t now) override;
  Result<bool> mark_mail_sending(std::int64_t outbox_id) override;
  Result<std::vector<std::pair<OutboxRow, ReportRow>>> interrupted_mail() override;
  Status mark_mail_sent(std::int64_t outbox_id) override;
  Result<std::optional<OutboxRow>> report_mail(std::int64_t report_id) override;
  Status mark_mail_failed(std::int64_t outbox_id, const std::string& error, std::int64_t next_attempt_at,
                          bool give_up) override;

  Result<std::vector<MachineStateRow>> machine_states() override;
  Status put_machine_state(const MachineStateRow& state) override;

private:
  // Ends a running bisection in `state` with `reason`; its queued requests fail with `request_code`.
  Status end_running_bisection(std::int64_t bisection_id, BisectionState state, const std::string& reason,
                               const std::string& request_code, const std::string& request_error);
  explicit Store(std::unique_ptr<Connection> connection);
  // Fills the rows' working-state sets (excluded, prebuilt) from bisection_marks.
  Status load_marks(std::vector<BisectionRow>& rows);

  std::unique_ptr<Connection> m_connection;
};

} // namespace bisectd::storage
