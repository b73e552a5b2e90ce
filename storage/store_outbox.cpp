// Reports and the mail outbox: each report's mail, sent once, retried with backoff, never twice.
#include "base/clock.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"
#include "storage/string_list.hpp"

namespace bisectd::storage {

namespace {

constexpr std::string_view k_report_columns =
  "r.id, r.bisection_id, r.subject, r.sender, r.to_list, r.cc_list, r.message_id, COALESCE(r.in_reply_to, ''), "
  "r.body, r.text, r.created_at, COALESCE(o.state = 'sent', 0), COALESCE(r.repeat_of, 0), r.text_all";
constexpr int k_report_column_count = 14;

ReportRow read_report(const Statement& s) {
  return ReportRow{s.column_int(0),
                   s.column_int(1),
                   s.column_text(2),
                   s.column_text(3),
                   decode_string_list(s.column_text(4)),
                   decode_string_list(s.column_text(5)),
                   s.column_text(6),
                   s.column_text(7),
                   s.column_text(8),
                   s.column_text(9),
                   s.column_text(13),
                   s.column_int(10),
                   s.column_int(11) != 0,
                   s.column_int(12)};
}

} // namespace

Result<std::optional<ReportRow>> Store::report(std::int64_t bisection_id) {
  return query_one<ReportRow>(*m_connection,
                              "SELECT " + std::string(k_report_columns) +
                                " FROM reports r LEFT JOIN outbox o ON o.report_id = r.id WHERE r.bisection_id = ?",
                              {integer(bisection_id)}, read_report);
}

Result<std::optional<ReportRow>> Store::first_report(const std::string& tree, const std::string& job,
                                                     const std::string& culprit, std::int64_t except_bisection) {
  return query_one<ReportRow>(*m_connection,
                              "SELECT " + std::string(k_report_columns) +
                                " FROM reports r JOIN bisections b ON b.id = r.bisection_id"
                                " LEFT JOIN outbox o ON o.report_id = r.id"
                                " WHERE b.tree = ? AND b.job = ? AND b.culprit = ? AND b.id != ?"
                                " AND r.repeat_of IS NULL ORDER BY r.id LIMIT 1",
                              {text(tree), text(job), text(culprit), integer(except_bisection)}, read_report);
}

namespace {

Result<std::vector<std::pair<OutboxRow, ReportRow>>> mail_where(Connection& connection, const std::string& where,
                                                                const std::vector<Value>& params) {
  return query<std::pair<OutboxRow, ReportRow>>(
    connection,
    "SELECT " + std::string(k_report_columns) +
      ", o.id, o.report_id, o.state, o.attempts, o.next_attempt_at, COALESCE(o.last_error, '') "
      "FROM outbox o JOIN reports r ON o.report_id = r.id WHERE " +
      where + " ORDER BY o.id",
    params, [](const Statement& s) {
      constexpr int k = k_report_column_count; // the outbox's columns follow the report's
      OutboxRow o{s.column_int(k), s.column_int(k + 1),
                  parse_outbox_state(s.column_text(k + 2)).value_or(OutboxState::failed), s.column_int(k + 3),
                  s.column_int(k + 4), s.column_text(k + 5)};
      return std::pair{o, read_report(s)};
    });
}

} // namespace

Result<std::vector<std::pair<OutboxRow, ReportRow>>> Store::due_mail(std::int64_t now) {
  return mail_where(*m_connection, "o.state = 'pending' AND o.next_attempt_at <= ?", {integer(now)});
}

Result<std::vector<std::pair<OutboxRow, ReportRow>>> Store::interrupted_mail() {
  return mail_where(*m_connection, "o.state = 'sending'", {});
}

Result<bool> Store::mark_mail_sending(std::int64_t outbox_id) {
  BISECTD_TRY_ASSIGN(int changed, m_connection->run("UPDATE outbox SET state = 'sending' WHERE id = ? AND "
                                                    "state = 'pending'",
                                                    {integer(outbox_id)}));
  return changed == 1;
}

Status Store::mark_mail_sent(std::int64_t outbox_id) {
  BISECTD_TRY(m_connection->run("UPDATE outbox SET state = 'sent', attempts = attempts + 1, sent_at = ?, "
                                "last_error = NULL WHERE id = ?",
                                {integer(base::unix_now()), integer(outbox_id)}));
  return {};
}

Result<std::optional<OutboxRow>> Store::report_mail(std::int64_t report_id) {
  return query_one<OutboxRow>(*m_connection,
                              "SELECT id, report_id, state, attempts, next_attempt_at, COALESCE(last_error, '') "
                              "FROM outbox WHERE report_id = ?",
                              {integer(report_id)}, [](const Statement& s) {
                                return OutboxRow{s.column_int(0), s.column_int(1),
                                                 parse_outbox_state(s.column_text(2)).value_or(OutboxState::failed),
                                                 s.column_int(3), s.column_int(4), s.column_text(5)};
                              });
}

Status Store::mark_mail_failed(std::int64_t outbox_id, const std::string& error, std::int64_t next_attempt_at,
                               bool give_up) {
  BISECTD_TRY(m_connection->run("UPDATE outbox SET state = ?, attempts = attempts + 1, last_error = ?, "
                                "next_attempt_at = ? WHERE id = ?",
                                {name_value(to_string(give_up ? OutboxState::failed : OutboxState::pending)),
                                 text(error), integer(next_attempt_at), integer(outbox_id)}));
  return {};
}

} // namespace bisectd::storage
