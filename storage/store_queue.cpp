// The durable test queue, samples and commit flags.
#include "storage/store.hpp"

#include "base/clock.hpp"
#include "storage/query.hpp"

namespace bisectd::storage {

namespace {

constexpr std::string_view k_request_columns =
  "id, tree, job, commit_sha, purpose, COALESCE(bisection_id, 0), COALESCE(detection_id, 0), machine_group, "
  "COALESCE(pin_machine, ''), runs, variant, state, attempts, COALESCE(machine, ''), COALESCE(error, ''), "
  "COALESCE(error_code, ''), created_at, updated_at";

RequestRow read_request(const Statement& s) {
  RequestRow r;
  r.id = s.column_int(0);
  r.tree = s.column_text(1);
  r.job = s.column_text(2);
  r.commit = s.column_text(3);
  r.purpose = s.column_text(4);
  r.bisection_id = s.column_int(5);
  r.detection_id = s.column_int(6);
  r.machine_group = s.column_text(7);
  r.pin_machine = s.column_text(8);
  r.runs = s.column_int(9);
  r.variant = s.column_text(10);
  r.state = s.column_text(11);
  r.attempts = s.column_int(12);
  r.machine = s.column_text(13);
  r.error = s.column_text(14);
  r.error_code = s.column_text(15);
  r.created_at = s.column_int(16);
  r.updated_at = s.column_int(17);
  return r;
}

constexpr std::string_view k_sample_columns =
  "id, request_id, tree, job, commit_sha, variant, machine, boot_id, run, metrics, verification, "
  "COALESCE(log_path, ''), created_at";

SampleRow read_sample(const Statement& s) {
  return SampleRow{s.column_int(0),  s.column_int(1),  s.column_text(2),      s.column_text(3), s.column_text(4),
                   s.column_text(5), s.column_text(6), s.column_text(7),      s.column_int(8),  s.column_text(9),
                   s.column_int(10) != 0, s.column_text(11), s.column_int(12)};
}

std::string request_select(std::string_view where) {
  return "SELECT " + std::string(k_request_columns) + " FROM requests WHERE " + std::string(where);
}

} // namespace

Result<std::int64_t> Store::enqueue(const RequestRow& r) {
  std::lock_guard lock(m_connection->mutex());
  auto now = base::unix_now();
  BISECTD_TRY(m_connection->run(
    "INSERT INTO requests (tree, job, commit_sha, purpose, bisection_id, detection_id, machine_group, pin_machine, "
    "runs, variant, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
    {text(r.tree), text(r.job), text(r.commit), text(r.purpose), nullable_id(r.bisection_id),
     nullable_id(r.detection_id), text(r.machine_group),
     r.pin_machine.empty() ? Value(nullptr) : text(r.pin_machine), integer(r.runs), text(r.variant), integer(now),
     integer(now)}));
  return m_connection->last_insert_id();
}

Result<std::optional<RequestRow>> Store::claim_request(const std::string& group, const std::string& machine) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(auto row, query_one<RequestRow>(
                                 *m_connection,
                                 request_select("state = 'queued' AND machine_group = ? AND "
                                                "(pin_machine IS NULL OR pin_machine = ?) ORDER BY id LIMIT 1"),
                                 {text(group), text(machine)}, read_request));
  if (!row) {
    return std::optional<RequestRow>{};
  }
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = 'building', machine = ?, attempts = attempts + 1, "
                                "updated_at = ? WHERE id = ?",
                                {text(machine), integer(base::unix_now()), integer(row->id)}));
  BISECTD_TRY(txn.commit());
  row->state = "building";
  row->machine = machine;
  row->attempts += 1;
  return row;
}

Status Store::set_request_state(std::int64_t id, const std::string& state) {
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = ?, updated_at = ? WHERE id = ?",
                                {text(state), integer(base::unix_now()), integer(id)}));
  return {};
}

Status Store::finish_request(std::int64_t id, const std::vector<SampleRow>& samples) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  auto now = base::unix_now();
  for (const auto& s : samples) {
    BISECTD_TRY(m_connection->run(
      "INSERT INTO samples (request_id, tree, job, commit_sha, variant, machine, boot_id, run, metrics, "
      "verification, log_path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {integer(id), text(s.tree), text(s.job), text(s.commit), text(s.variant), text(s.machine), text(s.boot_id),
       integer(s.run), text(s.metrics_json), integer(s.verification ? 1 : 0), text(s.log_path), integer(now)}));
  }
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = 'done', error = NULL, updated_at = ? WHERE id = ?",
                                {integer(now), integer(id)}));
  return txn.commit();
}

Status Store::fail_request(std::int64_t id, const std::string& code, const std::string& message, bool requeue) {
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = ?, error = ?, error_code = ?, updated_at = ? WHERE id = ?",
                                {text(requeue ? "queued" : "failed"), text(message), text(code),
                                 integer(base::unix_now()), integer(id)}));
  return {};
}

Result<int> Store::requeue_interrupted() {
  return m_connection->run("UPDATE requests SET state = 'queued' WHERE state IN ('building', 'running')");
}

Result<std::vector<RequestRow>> Store::requests_for_bisection(std::int64_t bisection_id) {
  return query<RequestRow>(*m_connection, request_select("bisection_id = ? ORDER BY id"), {integer(bisection_id)},
                           read_request);
}

Result<std::vector<RequestRow>> Store::requests_for_detection(std::int64_t detection_id) {
  return query<RequestRow>(*m_connection, request_select("detection_id = ? ORDER BY id"), {integer(detection_id)},
                           read_request);
}

Result<std::optional<RequestRow>> Store::request(std::int64_t id) {
  return query_one<RequestRow>(*m_connection, request_select("id = ?"), {integer(id)}, read_request);
}

Result<std::int64_t> Store::open_requests_for(const std::string& job, const std::string& commit) {
  BISECTD_TRY_ASSIGN(auto rows, query<std::int64_t>(*m_connection,
                                                    "SELECT COUNT(*) FROM requests WHERE job = ? AND commit_sha = ? "
                                                    "AND state IN ('queued', 'building', 'running')",
                                                    {text(job), text(commit)},
                                                    [](const Statement& s) { return s.column_int(0); }));
  return rows.front();
}

Result<std::map<std::string, std::int64_t>> Store::request_counts() {
  BISECTD_TRY_ASSIGN(auto rows, query<std::pair<std::string, std::int64_t>>(
                                  *m_connection, "SELECT state, COUNT(*) FROM requests GROUP BY state", {},
                                  [](const Statement& s) { return std::pair{s.column_text(0), s.column_int(1)}; }));
  return std::map<std::string, std::int64_t>(rows.begin(), rows.end());
}

Result<std::vector<SampleRow>> Store::samples(const std::string& job, const std::vector<std::string>& commits,
                                              const std::string& variant) {
  std::vector<SampleRow> all;
  for (const auto& commit : commits) {
    BISECTD_TRY_ASSIGN(auto rows, query<SampleRow>(*m_connection,
                                                   "SELECT " + std::string(k_sample_columns) +
                                                     " FROM samples WHERE job = ? AND commit_sha = ? AND variant = ? "
                                                     "ORDER BY id",
                                                   {text(job), text(commit), text(variant)}, read_sample));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

Result<std::vector<SampleRow>> Store::samples_for_commit_prefix(const std::string& prefix, const std::string& tree) {
  std::string sql = "SELECT " + std::string(k_sample_columns) + " FROM samples WHERE substr(commit_sha, 1, ?) = ?";
  std::vector<Value> params{integer(static_cast<std::int64_t>(prefix.size())), text(prefix)};
  if (!tree.empty()) {
    sql += " AND tree = ?";
    params.push_back(text(tree));
  }
  return query<SampleRow>(*m_connection, sql + " ORDER BY id", params, read_sample);
}

Result<std::vector<SampleRow>> Store::samples_for_job(const std::string& job) {
  return query<SampleRow>(*m_connection,
                          "SELECT " + std::string(k_sample_columns) + " FROM samples WHERE job = ? ORDER BY id",
                          {text(job)}, read_sample);
}

Result<std::vector<SampleRow>> Store::samples_of_request(std::int64_t request_id) {
  return query<SampleRow>(*m_connection,
                          "SELECT " + std::string(k_sample_columns) + " FROM samples WHERE request_id = ? ORDER BY id",
                          {integer(request_id)}, read_sample);
}

Result<std::int64_t> Store::add_flag(const std::string& job, const std::string& commit, const std::string& variant,
                                     const std::string& flag, const std::string& message) {
  std::lock_guard lock(m_connection->mutex());
  BISECTD_TRY(m_connection->run("INSERT INTO commit_flags (job, commit_sha, variant, flag, message, updated_at) "
                                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(job, commit_sha, variant, flag) DO UPDATE SET "
                                "count = count + 1, message = excluded.message, updated_at = excluded.updated_at",
                                {text(job), text(commit), text(variant), text(flag), text(message),
                                 integer(base::unix_now())}));
  BISECTD_TRY_ASSIGN(auto all, flags(job, commit, variant));
  return all[flag];
}

Result<std::map<std::string, std::int64_t>> Store::flags(const std::string& job, const std::string& commit,
                                                         const std::string& variant) {
  BISECTD_TRY_ASSIGN(auto rows, query<std::pair<std::string, std::int64_t>>(
                                  *m_connection,
                                  "SELECT flag, count FROM commit_flags WHERE job = ? AND commit_sha = ? AND variant = ?",
                                  {text(job), text(commit), text(variant)},
                                  [](const Statement& s) { return std::pair{s.column_text(0), s.column_int(1)}; }));
  return std::map<std::string, std::int64_t>(rows.begin(), rows.end());
}

Status Store::record_build(const std::string& job, const std::string& commit, const std::string& variant,
                           const std::string& outcome, double seconds, const std::string& log_path) {
  BISECTD_TRY(m_connection->run("INSERT INTO builds (job, commit_sha, variant, outcome, seconds, log_path, created_at) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                {text(job), text(commit), text(variant), text(outcome), Value(seconds), text(log_path),
                                 integer(base::unix_now())}));
  return {};
}

} // namespace bisectd::storage
