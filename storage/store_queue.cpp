// The durable test queue.
#include "base/clock.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"

namespace bisectd::storage {

namespace {

constexpr std::string_view k_request_columns =
  "id, tree, job, commit_sha, purpose, COALESCE(bisection_id, 0), COALESCE(detection_id, 0), machine_group, "
  "COALESCE(pin_machine, ''), runs, variant, state, attempts, COALESCE(machine, ''), COALESCE(error, ''), "
  "COALESCE(error_code, ''), created_at, updated_at, retry_at, lab_handle, machine_seconds";

RequestRow read_request(const Statement& s) {
  RequestRow r;
  r.id = s.column_int(0);
  r.tree = s.column_text(1);
  r.job = s.column_text(2);
  r.commit = s.column_text(3);
  r.purpose = parse_purpose(s.column_text(4)).value_or(Purpose::bisect);
  r.bisection_id = s.column_int(5);
  r.detection_id = s.column_int(6);
  r.machine_group = s.column_text(7);
  r.pin_machine = s.column_text(8);
  r.runs = s.column_int(9);
  r.variant = s.column_text(10);
  r.state = parse_request_state(s.column_text(11)).value_or(RequestState::failed);
  r.attempts = s.column_int(12);
  r.machine = s.column_text(13);
  r.error = s.column_text(14);
  r.error_code = s.column_text(15);
  r.created_at = s.column_int(16);
  r.updated_at = s.column_int(17);
  r.retry_at = s.column_int(18);
  r.machine_seconds = s.column_double(20);
  r.lab_handle = s.column_text(19);
  return r;
}

std::string request_select(std::string_view where) {
  return "SELECT " + std::string(k_request_columns) + " FROM requests WHERE " + std::string(where);
}

Value state_value(RequestState state) { return Value(std::string(to_string(state))); }

} // namespace

Result<std::int64_t> Store::enqueue(const RequestRow& r) {
  std::lock_guard lock(m_connection->mutex());
  auto now = base::unix_now();
  BISECTD_TRY(m_connection->run(
    "INSERT INTO requests (tree, job, commit_sha, purpose, bisection_id, detection_id, machine_group, pin_machine, "
    "runs, variant, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
    {text(r.tree), text(r.job), text(r.commit), text(std::string(to_string(r.purpose))), nullable_id(r.bisection_id),
     nullable_id(r.detection_id), text(r.machine_group), r.pin_machine.empty() ? Value(nullptr) : text(r.pin_machine),
     integer(r.runs), text(r.variant), integer(now), integer(now)}));
  return m_connection->last_insert_id();
}

Result<std::optional<RequestRow>> Store::claim_request(const std::string& group, const std::string& machine) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(auto row, query_one<RequestRow>(
                                 *m_connection,
                                 request_select("state = 'queued' AND machine_group = ? AND "
                                                "(pin_machine IS NULL OR pin_machine = ?) AND "
                                                "(retry_at <= ? OR (retry_elsewhere != '' AND retry_elsewhere != ?)) AND "
                                                "(lab_handle = '' OR machine = ?) AND "
                                                "tree NOT IN (SELECT name FROM trees WHERE removed = 1) "
                                                "ORDER BY lab_handle = '', attempts, id LIMIT 1"),
                                 {text(group), text(machine), integer(base::unix_now()), text(machine), text(machine)},
                                 read_request));
  if (!row) {
    return std::optional<RequestRow>{};
  }
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = 'building', machine = ?, attempts = attempts + 1, "
                                "updated_at = ? WHERE id = ?",
                                {text(machine), integer(base::unix_now()), integer(row->id)}));
  BISECTD_TRY(txn.commit());
  row->state = RequestState::building;
  row->machine = machine;
  row->attempts += 1;
  return row;
}

Status Store::set_request_state(std::int64_t id, RequestState state) {
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = ?, updated_at = ? WHERE id = ?",
                                {state_value(state), integer(base::unix_now()), integer(id)}));
  return {};
}

Status Store::fail_request(std::int64_t id, const std::string& code, const std::string& message,
                           std::optional<std::int64_t> retry_at, const std::string& elsewhere_than) {
  BISECTD_TRY(m_connection->run(
    "UPDATE requests SET state = ?, error = ?, error_code = ?, retry_at = ?, retry_elsewhere = ?, updated_at = ? "
    "WHERE id = ?",
    {state_value(retry_at ? RequestState::queued : RequestState::failed), text(message), text(code),
     integer(retry_at.value_or(0)), text(elsewhere_than), integer(base::unix_now()), integer(id)}));
  return {};
}

Result<std::pair<int, int>> Store::requeue_interrupted(int max_attempts) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(
    int failed,
    m_connection->run(
      "UPDATE requests SET state = 'failed', error_code = 'infra', error = 'interrupted by a daemon stop ' || "
      "attempts || ' times', updated_at = ? WHERE state IN ('building', 'running') AND attempts >= ?",
      {integer(base::unix_now()), integer(max_attempts)}));
  BISECTD_TRY_ASSIGN(int requeued,
                     m_connection->run("UPDATE requests SET state = 'queued' WHERE state IN ('building', 'running')"));
  BISECTD_TRY(txn.commit());
  return std::pair{requeued, failed};
}

Status Store::set_lab_handle(std::int64_t id, const std::string& handle) {
  BISECTD_TRY(m_connection->run("UPDATE requests SET lab_handle = ?, updated_at = ? WHERE id = ?",
                                {text(handle), integer(base::unix_now()), integer(id)}));
  return {};
}

Status Store::add_machine_time(std::int64_t id, double seconds) {
  BISECTD_TRY(m_connection->run("UPDATE requests SET machine_seconds = machine_seconds + ? WHERE id = ?",
                                {Value(seconds), integer(id)}));
  return {};
}

Status Store::requeue_request(std::int64_t id, const std::string& message) {
  BISECTD_TRY(
    m_connection->run("UPDATE requests SET state = 'queued', attempts = MAX(attempts - 1, 0), lab_handle = '', "
                      "error = ?, error_code = 'cancelled', retry_at = 0, updated_at = ? WHERE id = ?",
                      {text(message), integer(base::unix_now()), integer(id)}));
  return {};
}

Result<std::int64_t> Store::failed_requests_for(const std::string& job, const std::string& commit, Purpose purpose) {
  BISECTD_TRY_ASSIGN(auto rows, query<std::int64_t>(*m_connection,
                                                    "SELECT COUNT(*) FROM requests WHERE job = ? AND commit_sha = ? "
                                                    "AND purpose = ? AND state = 'failed'",
                                                    {text(job), text(commit), text(std::string(to_string(purpose)))},
                                                    [](const Statement& s) { return s.column_int(0); }));
  return rows.front();
}

Result<std::optional<RequestRow>> Store::last_failed_request(const std::string& job, const std::string& commit,
                                                             Purpose purpose) {
  return query_one<RequestRow>(
    *m_connection,
    request_select("job = ? AND commit_sha = ? AND purpose = ? AND state = 'failed' ORDER BY id DESC LIMIT 1"),
    {text(job), text(commit), text(std::string(to_string(purpose)))}, read_request);
}

Result<std::vector<RequestRow>> Store::requests_for_bisection(std::int64_t bisection_id) {
  return query<RequestRow>(*m_connection, request_select("bisection_id = ? ORDER BY id"), {integer(bisection_id)},
                           read_request);
}

Result<std::vector<RequestRow>> Store::queued_requests() {
  return query<RequestRow>(*m_connection, request_select("state = 'queued' ORDER BY id"), {}, read_request);
}

Result<std::vector<RequestRow>> Store::open_requests() {
  return query<RequestRow>(*m_connection, request_select("state IN ('queued', 'building', 'running') ORDER BY id"), {},
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
  BISECTD_TRY_ASSIGN(
    auto rows, query<std::pair<std::string, std::int64_t>>(
                 *m_connection, "SELECT state, COUNT(*) FROM requests GROUP BY state", {}, [](const Statement& s) {
                   return std::pair{s.column_text(0), s.column_int(1)};
                 }));
  return std::map<std::string, std::int64_t>(rows.begin(), rows.end());
}

Result<std::vector<std::string>> Store::watched_commits(const std::string& tree, const std::string& job,
                                                        const std::string& group, std::size_t limit) {
  return query<std::string>(
    *m_connection,
    "SELECT commit_sha FROM requests WHERE tree = ? AND job = ? AND machine_group = ? AND purpose = 'watch' "
    "AND state = 'done' GROUP BY commit_sha ORDER BY MIN(id) DESC LIMIT ?",
    {text(tree), text(job), text(group), integer(static_cast<std::int64_t>(limit))},
    [](const Statement& s) { return s.column_text(0); });
}

Result<bool> Store::is_watched(const std::string& tree, const std::string& job, const std::string& group,
                               const std::string& commit) {
  BISECTD_TRY_ASSIGN(
    auto rows,
    query<std::int64_t>(
      *m_connection,
      "SELECT COUNT(*) FROM requests WHERE tree = ? AND job = ? AND machine_group = ? AND purpose = 'watch' "
      "AND state = 'done' AND commit_sha = ?",
      {text(tree), text(job), text(group), text(commit)}, [](const Statement& s) { return s.column_int(0); }));
  return !rows.empty() && rows.front() > 0;
}

} // namespace bisectd::storage
