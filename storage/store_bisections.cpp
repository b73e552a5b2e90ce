// Bisections, their events and working-state marks, and the transaction that stores a result with its report.
#include "base/clock.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"
#include "storage/string_list.hpp"

namespace bisectd::storage {

namespace {

constexpr std::string_view k_bisection_columns =
  "id, tree, branch, job, metric, good, bad, range_good, range_bad, state, COALESCE(culprit, ''), "
  "COALESCE(p_culprit, 0), result, runs, builds, origin, COALESCE(error, ''), created_at, COALESCE(finished_at, 0), "
  "merge_sha, verification, boots, runs_reused, reused_earlier, machine_seconds";

BisectionRow read_bisection(const Statement& s) {
  BisectionRow b;
  b.id = s.column_int(0);
  b.tree = s.column_text(1);
  b.branch = s.column_text(2);
  b.job = s.column_text(3);
  b.metric = s.column_text(4);
  b.good = s.column_text(5);
  b.bad = s.column_text(6);
  b.range_good = s.column_text(7);
  b.range_bad = s.column_text(8);
  b.state = parse_bisection_state(s.column_text(9)).value_or(BisectionState::failed);
  b.culprit = s.column_text(10);
  b.p_culprit = s.column_double(11);
  b.result_json = s.column_text(12);
  b.runs = s.column_int(13);
  b.builds = s.column_int(14);
  b.origin = parse_origin(s.column_text(15)).value_or(Origin::manual);
  b.error = s.column_text(16);
  b.created_at = s.column_int(17);
  b.finished_at = s.column_int(18);
  b.merge = s.column_text(19);
  b.verification_json = s.column_text(20);
  b.boots = s.column_int(21);
  b.runs_reused = s.column_int(22);
  b.reused_earlier = s.column_int(23);
  b.machine_seconds = s.column_double(24);
  return b;
}

} // namespace

Result<std::int64_t> Store::add_bisection(const BisectionRow& b) {
  std::lock_guard lock(m_connection->mutex());
  BISECTD_TRY(m_connection->run(
    "INSERT INTO bisections (tree, branch, job, metric, good, bad, range_good, range_bad, state, origin, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
    {text(b.tree), text(b.branch), text(b.job), text(b.metric), text(b.good), text(b.bad), text(b.range_good),
     text(b.range_bad), name_value(to_string(b.origin)), integer(base::unix_now())}));
  return m_connection->last_insert_id();
}

Status Store::load_marks(std::vector<BisectionRow>& rows) {
  for (auto& b : rows) {
    BISECTD_TRY_ASSIGN(auto marks,
                       (query<std::pair<std::string, std::string>>(
                         *m_connection, "SELECT mark, commit_sha FROM bisection_marks WHERE bisection_id = ?",
                         {integer(b.id)}, [](const Statement& s) {
                           return std::pair{s.column_text(0), s.column_text(1)};
                         })));
    for (auto& [mark, sha] : marks) {
      (mark == "excluded" ? b.excluded : b.prebuilt).insert(std::move(sha));
    }
  }
  return {};
}

Result<std::optional<BisectionRow>> Store::bisection(std::int64_t id) {
  BISECTD_TRY_ASSIGN(auto rows,
                     query<BisectionRow>(*m_connection,
                                         "SELECT " + std::string(k_bisection_columns) + " FROM bisections WHERE id = ?",
                                         {integer(id)}, read_bisection));
  BISECTD_TRY(load_marks(rows));
  return rows.empty() ? std::optional<BisectionRow>() : std::optional<BisectionRow>(std::move(rows.front()));
}

Result<std::vector<BisectionRow>> Store::bisections(const std::string& tree, std::optional<BisectionState> state) {
  std::string state_name = state ? std::string(to_string(*state)) : "";
  BISECTD_TRY_ASSIGN(auto rows,
                     query<BisectionRow>(*m_connection,
                                         "SELECT " + std::string(k_bisection_columns) +
                                           " FROM bisections WHERE (? = '' OR tree = ?) AND (? = '' OR state = ?) "
                                           "ORDER BY id DESC",
                                         {text(tree), text(tree), text(state_name), text(state_name)}, read_bisection));
  BISECTD_TRY(load_marks(rows));
  return rows;
}

// Only a running bisection is updated: the driver computes its step from a row read earlier, and an operator may
// have cancelled it meanwhile (a slow step on a loaded host). Writing the whole row back would make it running
// again, or mail a cancelled bisection's culprit.
Status Store::update_bisection(const BisectionRow& b) {
  BISECTD_TRY_ASSIGN(auto changed, m_connection->run(
    "UPDATE bisections SET range_good = ?, range_bad = ?, state = ?, culprit = ?, p_culprit = ?, result = ?, "
    "runs = ?, builds = ?, error = ?, finished_at = ?, merge_sha = ?, verification = ?, boots = ?, runs_reused = ?, "
    "reused_earlier = ?, machine_seconds = ? WHERE id = ? AND state = 'running'",
    {text(b.range_good), text(b.range_bad), name_value(to_string(b.state)),
     b.culprit.empty() ? Value(nullptr) : text(b.culprit), Value(b.p_culprit), text(b.result_json), integer(b.runs),
     integer(b.builds), b.error.empty() ? Value(nullptr) : text(b.error),
     b.finished_at == 0 ? Value(nullptr) : integer(b.finished_at), text(b.merge), text(b.verification_json),
     integer(b.boots), integer(b.runs_reused), integer(b.reused_earlier), Value(b.machine_seconds),
     integer(b.id)}));
  if (changed == 0) {
    return make_error(ErrorCode::conflict, "bisection " + std::to_string(b.id) + " is no longer running");
  }
  return {};
}

Status Store::exclude_commit(std::int64_t bisection_id, const std::string& commit) {
  BISECTD_TRY(m_connection->run("INSERT OR IGNORE INTO bisection_marks (bisection_id, commit_sha, mark) "
                                "VALUES (?, ?, 'excluded')",
                                {integer(bisection_id), text(commit)}));
  return {};
}

Status Store::add_prebuilt(std::int64_t bisection_id, const std::string& commit) {
  BISECTD_TRY(m_connection->run("INSERT OR IGNORE INTO bisection_marks (bisection_id, commit_sha, mark) "
                                "VALUES (?, ?, 'prebuilt')",
                                {integer(bisection_id), text(commit)}));
  return {};
}

namespace {

// The state of bisection `id`, or not_found.
Result<BisectionState> state_of(Connection& connection, std::int64_t id) {
  BISECTD_TRY_ASSIGN(auto state,
                     query_one<std::string>(connection, "SELECT state FROM bisections WHERE id = ?", {integer(id)},
                                            [](const Statement& s) { return s.column_text(0); }));
  if (!state) {
    return make_error(ErrorCode::not_found, "bisection " + std::to_string(id) + " not found");
  }
  return parse_bisection_state(*state).value_or(BisectionState::failed);
}

} // namespace

Status Store::end_running_bisection(std::int64_t bisection_id, BisectionState state, const std::string& reason,
                                    const std::string& request_code, const std::string& request_error) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(auto now_state, state_of(*m_connection, bisection_id));
  if (now_state != BisectionState::running) {
    return make_error(ErrorCode::conflict, "bisection " + std::to_string(bisection_id) + " is " +
                                             std::string(to_string(now_state)) + ", not running");
  }
  BISECTD_TRY(m_connection->run(
    "UPDATE bisections SET state = ?, error = ?, finished_at = ? WHERE id = ?",
    {text(std::string(to_string(state))), text(reason), integer(base::unix_now()), integer(bisection_id)}));
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = 'failed', error_code = ?, error = ? "
                                "WHERE bisection_id = ? AND state = 'queued'",
                                {text(request_code), text(request_error), integer(bisection_id)}));
  return txn.commit();
}

Status Store::cancel_bisection(std::int64_t bisection_id) {
  return end_running_bisection(bisection_id, BisectionState::cancelled, "cancelled by the operator", "cancelled",
                               "bisection cancelled");
}

Status Store::fail_bisection(std::int64_t bisection_id, const std::string& reason) {
  return end_running_bisection(bisection_id, BisectionState::failed, reason, "bisection_failed",
                               "bisection failed: " + reason);
}

Status Store::retry_bisection(std::int64_t bisection_id) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(auto state, state_of(*m_connection, bisection_id));
  if (state == BisectionState::running) {
    return make_error(ErrorCode::conflict, "bisection " + std::to_string(bisection_id) + " is running already");
  }
  BISECTD_TRY(
    m_connection->run("DELETE FROM commit_flags WHERE flag = 'infra' AND (job, commit_sha, variant) IN "
                      "(SELECT job, commit_sha, variant FROM requests WHERE bisection_id = ? AND state = 'failed')",
                      {integer(bisection_id)}));
  BISECTD_TRY(m_connection->run("UPDATE bisections SET state = 'running', error = NULL, finished_at = NULL, "
                                "culprit = NULL WHERE id = ?",
                                {integer(bisection_id)}));
  return txn.commit();
}

Result<std::int64_t> Store::delete_bisection(std::int64_t bisection_id, bool purge) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(auto state, state_of(*m_connection, bisection_id));
  if (state == BisectionState::running) {
    return make_error(ErrorCode::conflict,
                      "bisection " + std::to_string(bisection_id) + " is running: cancel it first");
  }
  std::int64_t purged = 0;
  const std::string of_requests = "(SELECT id FROM requests WHERE bisection_id = ?)";
  if (purge) {
    BISECTD_TRY(m_connection->run("DELETE FROM sample_metrics WHERE sample_id IN (SELECT id FROM samples WHERE "
                                  "request_id IN " +
                                    of_requests + ")",
                                  {integer(bisection_id)}));
    BISECTD_TRY_ASSIGN(int deleted, m_connection->run("DELETE FROM samples WHERE request_id IN " + of_requests,
                                                      {integer(bisection_id)}));
    purged = deleted;
  }
  // Requests whose samples stay (other bisections and the series share them) remain, detached.
  BISECTD_TRY(m_connection->run("DELETE FROM requests WHERE bisection_id = ? AND id NOT IN "
                                "(SELECT request_id FROM samples)",
                                {integer(bisection_id)}));
  BISECTD_TRY(
    m_connection->run("UPDATE requests SET bisection_id = NULL WHERE bisection_id = ?", {integer(bisection_id)}));
  BISECTD_TRY(m_connection->run("DELETE FROM outbox WHERE report_id IN (SELECT id FROM reports WHERE "
                                "bisection_id = ?)",
                                {integer(bisection_id)}));
  for (const char* table : {"reports", "bisection_events", "bisection_marks"}) {
    BISECTD_TRY(
      m_connection->run(std::string("DELETE FROM ") + table + " WHERE bisection_id = ?", {integer(bisection_id)}));
  }
  BISECTD_TRY(
    m_connection->run("UPDATE detections SET bisection_id = NULL WHERE bisection_id = ?", {integer(bisection_id)}));
  BISECTD_TRY(m_connection->run("DELETE FROM bisections WHERE id = ?", {integer(bisection_id)}));
  BISECTD_TRY(txn.commit());
  return purged;
}

Status Store::add_event(std::int64_t bisection_id, const std::string& message) {
  BISECTD_TRY(m_connection->run("INSERT INTO bisection_events (bisection_id, at, message) VALUES (?, ?, ?)",
                                {integer(bisection_id), integer(base::unix_now()), text(message)}));
  return {};
}

Result<std::vector<EventRow>> Store::events(std::int64_t bisection_id) {
  return query<EventRow>(*m_connection, "SELECT at, message FROM bisection_events WHERE bisection_id = ? ORDER BY id",
                         {integer(bisection_id)}, [](const Statement& s) {
                           return EventRow{s.column_int(0), s.column_text(1)};
                         });
}

Result<BisectionCost> Store::bisection_cost(std::int64_t bisection_id) {
  // Builds: every (commit, variant) its requests measured, or tried to build and could not.
  BISECTD_TRY_ASSIGN(
    auto cost,
    query_one<BisectionCost>(
      *m_connection,
      "SELECT COUNT(s.id), COUNT(DISTINCT s.boot_id), "
      "(SELECT COUNT(*) FROM (SELECT DISTINCT commit_sha, variant FROM requests r2 WHERE r2.bisection_id = ?1 AND "
      "(r2.error_code = 'build_failed' OR EXISTS (SELECT 1 FROM samples s2 WHERE s2.request_id = r2.id)))), "
      "(SELECT COALESCE(SUM(machine_seconds), 0) FROM requests r3 WHERE r3.bisection_id = ?1) "
      "FROM requests r LEFT JOIN samples s ON s.request_id = r.id WHERE r.bisection_id = ?1",
      {integer(bisection_id)}, [](const Statement& s) {
        return BisectionCost{s.column_int(0), s.column_int(1), s.column_int(2), s.column_double(3)};
      }));
  return cost.value_or(BisectionCost{});
}

Status Store::finish_bisection(const BisectionRow& bisection, const std::optional<ReportRow>& report) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY(update_bisection(bisection));
  if (report) {
    const auto& r = *report;
    BISECTD_TRY(m_connection->run(
      "INSERT INTO reports (bisection_id, subject, sender, to_list, cc_list, message_id, in_reply_to, body, text, "
      "created_at, repeat_of, text_all) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {integer(bisection.id), text(r.subject), text(r.sender), text(encode_string_list(r.to)),
       text(encode_string_list(r.cc)), text(r.message_id), text(r.in_reply_to), text(r.body), text(r.text),
       integer(base::unix_now()), r.repeat_of == 0 ? Value(nullptr) : integer(r.repeat_of), text(r.text_all)}));
    if (r.repeat_of == 0) {
      BISECTD_TRY(m_connection->run("INSERT INTO outbox (report_id, state, next_attempt_at) VALUES (?, 'pending', ?)",
                                    {integer(m_connection->last_insert_id()), integer(base::unix_now())}));
    }
  }
  return txn.commit();
}

} // namespace bisectd::storage
