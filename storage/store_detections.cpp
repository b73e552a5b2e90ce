// Detections: the watcher's confirmed (or rejected) shifts, each tied to the bisection it opened.
#include "storage/query.hpp"
#include "storage/store.hpp"

namespace bisectd::storage {

namespace {

constexpr std::string_view k_detection_columns =
  "id, tree, branch, job, good, bad, metric, state, COALESCE(change, 0), COALESCE(p_value, 1), "
  "COALESCE(bisection_id, 0), created_at, rewritten, base, note, COALESCE(request_id, 0)";

DetectionRow read_detection(const Statement& s) {
  return DetectionRow{s.column_int(0),       s.column_text(1),
                      s.column_text(2),      s.column_text(3),
                      s.column_text(4),      s.column_text(5),
                      s.column_text(6),      parse_detection_state(s.column_text(7)).value_or(DetectionState::rejected),
                      s.column_double(8),    s.column_double(9),
                      s.column_int(10),      s.column_int(11),
                      s.column_int(12) != 0, s.column_text(13),
                      s.column_text(14),     s.column_int(15)};
}

} // namespace

Result<std::int64_t> Store::add_detection(const DetectionRow& d) {
  std::lock_guard lock(m_connection->mutex());
  BISECTD_TRY(m_connection->run("INSERT INTO detections (tree, branch, job, good, bad, metric, state, change, p_value, "
                                "created_at, bisection_id, rewritten, base, note, request_id) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                {text(d.tree), text(d.branch), text(d.job), text(d.good), text(d.bad), text(d.metric),
                                 name_value(to_string(d.state)), Value(d.change), Value(d.p_value),
                                 integer(base::unix_now()), nullable_id(d.bisection_id), integer(d.rewritten ? 1 : 0),
                                 text(d.base), text(d.note), nullable_id(d.request_id)}));
  return m_connection->last_insert_id();
}

Result<std::optional<DetectionRow>> Store::detection(const std::string& tree, const std::string& job,
                                                     const std::string& good, const std::string& bad) {
  return query_one<DetectionRow>(*m_connection,
                                 "SELECT " + std::string(k_detection_columns) +
                                   " FROM detections WHERE tree = ? AND job = ? AND good = ? AND bad = ?",
                                 {text(tree), text(job), text(good), text(bad)}, read_detection);
}

Result<std::vector<DetectionRow>> Store::detections(const std::string& tree) {
  return query<DetectionRow>(*m_connection,
                             "SELECT " + std::string(k_detection_columns) +
                               " FROM detections WHERE (? = '' OR tree = ?) ORDER BY id DESC",
                             {text(tree), text(tree)}, read_detection);
}

Result<std::vector<DetectionRow>> Store::detections_in_state(DetectionState state) {
  return query<DetectionRow>(
    *m_connection, "SELECT " + std::string(k_detection_columns) + " FROM detections WHERE state = ? ORDER BY id",
    {name_value(to_string(state))}, read_detection);
}

Status Store::set_detection_state(std::int64_t id, DetectionState state, std::int64_t bisection_id,
                                  std::optional<double> change) {
  if (change) {
    BISECTD_TRY(
      m_connection->run("UPDATE detections SET state = ?, bisection_id = ?, change = ? WHERE id = ?",
                        {name_value(to_string(state)), nullable_id(bisection_id), Value(*change), integer(id)}));
    return {};
  }
  BISECTD_TRY(m_connection->run("UPDATE detections SET state = ?, bisection_id = ? WHERE id = ?",
                                {name_value(to_string(state)), nullable_id(bisection_id), integer(id)}));
  return {};
}

Status Store::update_detection(const DetectionRow& d) {
  BISECTD_TRY(m_connection->run(
    "UPDATE detections SET state = ?, bisection_id = ?, change = ?, p_value = ?, rewritten = ?, base = ?, note = ?, "
    "request_id = ? WHERE id = ?",
    {name_value(to_string(d.state)), nullable_id(d.bisection_id), Value(d.change), Value(d.p_value),
     integer(d.rewritten ? 1 : 0), text(d.base), text(d.note), nullable_id(d.request_id), integer(d.id)}));
  return {};
}

} // namespace bisectd::storage
