#pragma once
// Every query the daemon makes, by noun. Each write that must be atomic is one transaction here.

#include "base/error.hpp"
#include "storage/rows.hpp"
#include "storage/sqlite.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace bisectd::storage {

class Store {
public:
  // Opens or creates DATA_DIR/bisectd.db and migrates it.
  static Result<std::unique_ptr<Store>> open(const std::filesystem::path& file);

  // Trees and jobs. add_tree stores the tree and its job together or not at all.
  Status add_tree(const TreeRow& tree, const JobRow& job);
  Result<std::vector<TreeRow>> trees();
  Result<std::optional<TreeRow>> tree(const std::string& name);
  Status remove_tree(const std::string& name);
  Status put_job(const JobRow& job);
  Result<std::optional<JobRow>> job(const std::string& name);
  Result<std::vector<JobRow>> jobs();

  // Branch heads: `seen` is the newest head fetched, `tested` the newest head measured (the baseline).
  Result<std::optional<HeadRow>> head(const std::string& tree, const std::string& branch);
  Status set_head_seen(const std::string& tree, const std::string& branch, const std::string& sha);
  Status set_head_tested(const std::string& tree, const std::string& branch, const std::string& sha);

  // The durable test queue.
  Result<std::int64_t> enqueue(const RequestRow& request);
  // Claims the oldest queued request of `group` that `machine` may take; marks it building on `machine`.
  Result<std::optional<RequestRow>> claim_request(const std::string& group, const std::string& machine);
  Status set_request_state(std::int64_t id, const std::string& state);
  // Stores the visit's samples and marks the request done, atomically.
  Status finish_request(std::int64_t id, const std::vector<SampleRow>& samples);
  // Marks the request failed (requeue=false) or back to queued for a retry (requeue=true).
  Status fail_request(std::int64_t id, const std::string& code, const std::string& message, bool requeue);
  // After a crash: requests left building/running go back to the queue (their partial samples were never stored).
  Result<int> requeue_interrupted();
  Result<std::vector<RequestRow>> requests_for_bisection(std::int64_t bisection_id);
  Result<std::vector<RequestRow>> requests_for_detection(std::int64_t detection_id);
  Result<std::optional<RequestRow>> request(std::int64_t id);
  // Queued, building or running requests measuring (job, commit) for any purpose.
  Result<std::int64_t> open_requests_for(const std::string& job, const std::string& commit);
  Result<std::map<std::string, std::int64_t>> request_counts();

  // Samples are shared by everything that measured (job, commit, variant).
  Result<std::vector<SampleRow>> samples(const std::string& job, const std::vector<std::string>& commits,
                                         const std::string& variant = "");
  Result<std::vector<SampleRow>> samples_for_commit_prefix(const std::string& prefix, const std::string& tree);
  Result<std::vector<SampleRow>> samples_for_job(const std::string& job);
  Result<std::vector<SampleRow>> samples_of_request(std::int64_t request_id);

  // Commit flags (unbuildable, unbootable) with a count of occurrences.
  Result<std::int64_t> add_flag(const std::string& job, const std::string& commit, const std::string& variant,
                                const std::string& flag, const std::string& message);
  Result<std::map<std::string, std::int64_t>> flags(const std::string& job, const std::string& commit,
                                                     const std::string& variant = "");
  Status record_build(const std::string& job, const std::string& commit, const std::string& variant,
                      const std::string& outcome, double seconds, const std::string& log_path);

  // Detections (a shift seen between two tested heads, being confirmed).
  Result<std::int64_t> add_detection(const DetectionRow& detection);
  Result<std::optional<DetectionRow>> detection(const std::string& tree, const std::string& job,
                                                const std::string& good, const std::string& bad);
  Result<std::vector<DetectionRow>> detections_in_state(const std::string& state);
  // `change`, when given, replaces the detection's measured relative change (the confirmation's estimate).
  Status set_detection_state(std::int64_t id, const std::string& state, std::int64_t bisection_id,
                             std::optional<double> change = std::nullopt);

  // Bisections.
  Result<std::int64_t> add_bisection(const BisectionRow& bisection);
  Result<std::optional<BisectionRow>> bisection(std::int64_t id);
  Result<std::vector<BisectionRow>> bisections(const std::string& tree = "", const std::string& state = "");
  Status update_bisection(const BisectionRow& bisection);
  Status add_event(std::int64_t bisection_id, const std::string& message);
  Result<std::vector<EventRow>> events(std::int64_t bisection_id);

  // Finishes a bisection and queues its mail in one transaction: a crash never loses or doubles the mail.
  Status finish_bisection(const BisectionRow& bisection, const std::optional<ReportRow>& report);
  Result<std::optional<ReportRow>> report(std::int64_t bisection_id);
  Result<std::vector<std::pair<OutboxRow, ReportRow>>> due_mail(std::int64_t now);
  Status mark_mail_sent(std::int64_t outbox_id);
  Status mark_mail_failed(std::int64_t outbox_id, const std::string& error, std::int64_t next_attempt_at,
                          bool give_up);

  Connection& connection() { return *m_connection; }

private:
  explicit Store(std::unique_ptr<Connection> connection) : m_connection(std::move(connection)) {}
  std::unique_ptr<Connection> m_connection;
};

} // namespace bisectd::storage
