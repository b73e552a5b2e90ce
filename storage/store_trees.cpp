// Trees, jobs and branch heads.
#include "base/clock.hpp"
#include "storage/query.hpp"
#include "storage/schema.hpp"
#include "storage/store.hpp"
#include "storage/string_list.hpp"

namespace bisectd::storage {

namespace {

constexpr std::string_view k_tree_columns =
  "id, name, url, branches, job, notify, mail_cc, private, poll_interval_s, created_at, watch_error, watch_error_at, "
  "polled_at";

TreeRow read_tree(const Statement& s) {
  return TreeRow{s.column_int(0),
                 s.column_text(1),
                 s.column_text(2),
                 decode_string_list(s.column_text(3)),
                 s.column_text(4),
                 decode_string_list(s.column_text(5)),
                 decode_string_list(s.column_text(6)),
                 s.column_int(7) != 0,
                 s.column_int(8),
                 s.column_int(9),
                 s.column_text(10),
                 s.column_int(11),
                 s.column_int(12)};
}

JobRow read_job(const Statement& s) {
  return JobRow{s.column_text(0), s.column_text(1), s.column_text(2), s.column_int(3)};
}

} // namespace

Store::Store(std::unique_ptr<Connection> connection) : m_connection(std::move(connection)) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const std::filesystem::path& file) {
  BISECTD_TRY_ASSIGN(auto connection, Connection::open(file));
  BISECTD_TRY(migrate(*connection));
  return std::unique_ptr<Store>(new Store(std::move(connection)));
}

Status Store::add_tree(const TreeRow& tree, const JobRow& job) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(auto existing,
                     query_one<std::int64_t>(*m_connection, "SELECT removed FROM trees WHERE name = ?",
                                             {text(tree.name)}, [](const Statement& s) { return s.column_int(0); }));
  if (existing && *existing == 0) {
    return make_error(ErrorCode::conflict, "tree '" + tree.name + "' exists already");
  }
  BISECTD_TRY(m_connection->run("DELETE FROM trees WHERE name = ?", {text(tree.name)}));
  // A tree added again under a removed tree's name starts clean: no baseline, no decision of the old one.
  BISECTD_TRY(m_connection->run("DELETE FROM heads WHERE tree = ?", {text(tree.name)}));
  BISECTD_TRY(m_connection->run("DELETE FROM detections WHERE tree = ?", {text(tree.name)}));
  BISECTD_TRY(put_job(job));
  BISECTD_TRY(m_connection->run(
    "INSERT INTO trees (name, url, branches, job, notify, mail_cc, private, poll_interval_s, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    {text(tree.name), text(tree.url), text(encode_string_list(tree.branches)), text(tree.job),
     text(encode_string_list(tree.notify)), text(encode_string_list(tree.mail_cc)), integer(tree.is_private ? 1 : 0),
     integer(tree.poll_interval_s), integer(base::unix_now())}));
  return txn.commit();
}

Result<std::vector<TreeRow>> Store::trees() {
  return query<TreeRow>(*m_connection,
                        "SELECT " + std::string(k_tree_columns) + " FROM trees WHERE removed = 0 ORDER BY name", {},
                        read_tree);
}

Result<std::optional<TreeRow>> Store::tree(const std::string& name) {
  return query_one<TreeRow>(*m_connection,
                            "SELECT " + std::string(k_tree_columns) + " FROM trees WHERE name = ? AND removed = 0",
                            {text(name)}, read_tree);
}

Status Store::remove_tree(const std::string& name) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  BISECTD_TRY_ASSIGN(int changed,
                     m_connection->run("UPDATE trees SET removed = 1 WHERE name = ? AND removed = 0", {text(name)}));
  if (changed == 0) {
    return make_error(ErrorCode::not_found, "tree '" + name + "' not found");
  }
  // Its work ends with it: nothing of a removed tree is claimed, confirmed or bisected any more.
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = 'failed', error = 'tree removed' "
                                "WHERE tree = ? AND state = 'queued'",
                                {text(name)}));
  BISECTD_TRY(m_connection->run("UPDATE detections SET state = 'rejected', note = 'tree removed' "
                                "WHERE tree = ? AND state IN ('confirming', 'measuring_base')",
                                {text(name)}));
  BISECTD_TRY(m_connection->run("UPDATE bisections SET state = 'failed', error = 'tree removed', finished_at = ? "
                                "WHERE tree = ? AND state = 'running'",
                                {integer(base::unix_now()), text(name)}));
  return txn.commit();
}

Status Store::update_tree(const TreeRow& tree, const std::optional<JobRow>& job) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  if (job) {
    BISECTD_TRY(put_job(*job));
  }
  BISECTD_TRY_ASSIGN(
    int changed,
    m_connection->run(
      "UPDATE trees SET job = ?, notify = ?, mail_cc = ?, private = ?, poll_interval_s = ? WHERE name = ? AND "
      "removed = 0",
      {text(tree.job), text(encode_string_list(tree.notify)), text(encode_string_list(tree.mail_cc)),
       integer(tree.is_private ? 1 : 0), integer(tree.poll_interval_s), text(tree.name)}));
  if (changed == 0) {
    return make_error(ErrorCode::not_found, "tree '" + tree.name + "' not found");
  }
  return txn.commit();
}

Status Store::set_watch_error(const std::string& name, const std::string& error) {
  BISECTD_TRY_ASSIGN(int changed,
                     m_connection->run("UPDATE trees SET watch_error = ?1, watch_error_at = CASE WHEN ?1 = '' THEN 0 "
                                       "WHEN watch_error_at = 0 THEN ?2 ELSE watch_error_at END "
                                       "WHERE name = ?3 AND removed = 0",
                                       {text(error), integer(base::unix_now()), text(name)}));
  if (changed == 0) {
    return make_error(ErrorCode::not_found, "tree '" + name + "' not found");
  }
  return {};
}

Status Store::set_polled(const std::string& name, std::int64_t at) {
  BISECTD_TRY(
    m_connection->run("UPDATE trees SET polled_at = ? WHERE name = ? AND removed = 0", {integer(at), text(name)}));
  return {};
}

Status Store::put_job(const JobRow& job) {
  BISECTD_TRY(m_connection->run("INSERT INTO jobs (name, path, yaml, created_at) VALUES (?, ?, ?, ?) "
                                "ON CONFLICT(name) DO UPDATE SET path = excluded.path, yaml = excluded.yaml",
                                {text(job.name), text(job.path), text(job.yaml), integer(base::unix_now())}));
  return {};
}

Result<std::optional<JobRow>> Store::job(const std::string& name) {
  return query_one<JobRow>(*m_connection, "SELECT name, path, yaml, created_at FROM jobs WHERE name = ?", {text(name)},
                           read_job);
}

Result<std::vector<JobRow>> Store::jobs() {
  return query<JobRow>(*m_connection, "SELECT name, path, yaml, created_at FROM jobs ORDER BY name", {}, read_job);
}

Result<std::optional<HeadRow>> Store::head(const std::string& tree, const std::string& branch) {
  return query_one<HeadRow>(
    *m_connection, "SELECT tree, branch, seen, tested, error, error_at FROM heads WHERE tree = ? AND branch = ?",
    {text(tree), text(branch)}, [](const Statement& s) {
      return HeadRow{s.column_text(0), s.column_text(1), s.column_text(2),
                     s.column_text(3), s.column_text(4), s.column_int(5)};
    });
}

Status Store::set_head_seen(const std::string& tree, const std::string& branch, const std::string& sha) {
  BISECTD_TRY(m_connection->run("INSERT INTO heads (tree, branch, seen, updated_at) VALUES (?, ?, ?, ?) "
                                "ON CONFLICT(tree, branch) DO UPDATE SET seen = excluded.seen, "
                                "updated_at = excluded.updated_at",
                                {text(tree), text(branch), text(sha), integer(base::unix_now())}));
  return {};
}

Status Store::set_head_tested(const std::string& tree, const std::string& branch, const std::string& sha) {
  BISECTD_TRY(m_connection->run("INSERT INTO heads (tree, branch, tested, updated_at) VALUES (?, ?, ?, ?) "
                                "ON CONFLICT(tree, branch) DO UPDATE SET tested = excluded.tested, "
                                "updated_at = excluded.updated_at",
                                {text(tree), text(branch), text(sha), integer(base::unix_now())}));
  return {};
}

Status Store::set_head_error(const std::string& tree, const std::string& branch, const std::string& error) {
  BISECTD_TRY(
    m_connection->run("INSERT INTO heads (tree, branch, error, error_at, updated_at) VALUES (?1, ?2, ?3, "
                      "CASE WHEN ?3 = '' THEN 0 ELSE ?4 END, ?4) "
                      "ON CONFLICT(tree, branch) DO UPDATE SET error = ?3, error_at = CASE WHEN ?3 = '' THEN 0 "
                      "WHEN heads.error_at = 0 THEN ?4 ELSE heads.error_at END, updated_at = ?4",
                      {text(tree), text(branch), text(error), integer(base::unix_now())}));
  return {};
}

} // namespace bisectd::storage
