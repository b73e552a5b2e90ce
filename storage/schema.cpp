#include "storage/schema.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace bisectd::storage {

namespace {

// Migration i brings the schema from version i to i + 1. Never edit a released entry: append one.
constexpr std::array<std::string_view, k_schema_version> k_migrations = {
  R"sql(
CREATE TABLE trees (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, url TEXT NOT NULL,
  branches TEXT NOT NULL,            -- JSON array
  job TEXT NOT NULL, notify TEXT NOT NULL DEFAULT '[]', mail_cc TEXT NOT NULL DEFAULT '[]',
  private INTEGER NOT NULL DEFAULT 1, poll_interval_s INTEGER NOT NULL DEFAULT 60,
  created_at INTEGER NOT NULL, removed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE jobs (
  name TEXT PRIMARY KEY, path TEXT NOT NULL, yaml TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE heads (
  tree TEXT NOT NULL, branch TEXT NOT NULL, seen TEXT, tested TEXT, updated_at INTEGER NOT NULL,
  PRIMARY KEY (tree, branch));
CREATE TABLE requests (
  id INTEGER PRIMARY KEY, tree TEXT NOT NULL, job TEXT NOT NULL, commit_sha TEXT NOT NULL,
  purpose TEXT NOT NULL,             -- watch | confirm | bisect | verify
  bisection_id INTEGER, detection_id INTEGER, machine_group TEXT NOT NULL, pin_machine TEXT,
  runs INTEGER NOT NULL, variant TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL,               -- queued | building | running | done | failed
  attempts INTEGER NOT NULL DEFAULT 0, machine TEXT, error TEXT, error_code TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX requests_state ON requests(state);
CREATE INDEX requests_bisection ON requests(bisection_id);
CREATE TABLE samples (
  id INTEGER PRIMARY KEY, request_id INTEGER NOT NULL REFERENCES requests(id), tree TEXT NOT NULL,
  job TEXT NOT NULL, commit_sha TEXT NOT NULL, variant TEXT NOT NULL DEFAULT '', machine TEXT NOT NULL,
  boot_id TEXT NOT NULL, run INTEGER NOT NULL, metrics TEXT NOT NULL, verification INTEGER NOT NULL DEFAULT 0,
  log_path TEXT, created_at INTEGER NOT NULL,
  UNIQUE (request_id, boot_id, run));
CREATE INDEX samples_job_commit ON samples(job, commit_sha);
CREATE TABLE commit_flags (
  job TEXT NOT NULL, commit_sha TEXT NOT NULL, variant TEXT NOT NULL DEFAULT '',
  flag TEXT NOT NULL,                -- unbuildable | unbootable
  count INTEGER NOT NULL DEFAULT 1, message TEXT, updated_at INTEGER NOT NULL,
  PRIMARY KEY (job, commit_sha, variant, flag));
CREATE TABLE builds (
  id INTEGER PRIMARY KEY, job TEXT NOT NULL, commit_sha TEXT NOT NULL, variant TEXT NOT NULL DEFAULT '',
  outcome TEXT NOT NULL, seconds REAL NOT NULL, log_path TEXT, created_at INTEGER NOT NULL);
CREATE TABLE detections (
  id INTEGER PRIMARY KEY, tree TEXT NOT NULL, branch TEXT NOT NULL, job TEXT NOT NULL,
  good TEXT NOT NULL, bad TEXT NOT NULL, metric TEXT NOT NULL,
  state TEXT NOT NULL,               -- confirming | confirmed | rejected
  change REAL, p_value REAL, bisection_id INTEGER, created_at INTEGER NOT NULL,
  UNIQUE (tree, job, good, bad));
CREATE TABLE bisections (
  id INTEGER PRIMARY KEY, tree TEXT NOT NULL, branch TEXT NOT NULL, job TEXT NOT NULL, metric TEXT NOT NULL,
  good TEXT NOT NULL, bad TEXT NOT NULL,
  range_good TEXT NOT NULL, range_bad TEXT NOT NULL,   -- the range being searched now (merge recursion)
  state TEXT NOT NULL,               -- running | found | not_found | failed
  culprit TEXT, p_culprit REAL, result TEXT NOT NULL DEFAULT '{}',   -- JSON: credible set, shift, verification
  runs INTEGER NOT NULL DEFAULT 0, builds INTEGER NOT NULL DEFAULT 0,
  origin TEXT NOT NULL, error TEXT, created_at INTEGER NOT NULL, finished_at INTEGER);
CREATE TABLE bisection_events (
  id INTEGER PRIMARY KEY, bisection_id INTEGER NOT NULL REFERENCES bisections(id), at INTEGER NOT NULL,
  message TEXT NOT NULL);
CREATE TABLE reports (
  id INTEGER PRIMARY KEY, bisection_id INTEGER NOT NULL UNIQUE REFERENCES bisections(id),
  subject TEXT NOT NULL, sender TEXT NOT NULL, to_list TEXT NOT NULL, cc_list TEXT NOT NULL,
  message_id TEXT NOT NULL UNIQUE, in_reply_to TEXT, body TEXT NOT NULL, text TEXT NOT NULL,
  created_at INTEGER NOT NULL);
CREATE TABLE outbox (
  id INTEGER PRIMARY KEY, report_id INTEGER NOT NULL UNIQUE REFERENCES reports(id),
  state TEXT NOT NULL,               -- pending | sent | failed
  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL, last_error TEXT, sent_at INTEGER);
)sql",
  // 2: a sample's metrics one row each (decoded once, when stored); a bisection's working state in columns and
  // marks instead of keys of its result JSON.
  R"sql(
CREATE TABLE sample_metrics (
  sample_id INTEGER NOT NULL REFERENCES samples(id), name TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY (sample_id, name)) WITHOUT ROWID;
CREATE INDEX sample_metrics_name ON sample_metrics(name, sample_id);
INSERT OR IGNORE INTO sample_metrics (sample_id, name, value)
  SELECT s.id, m.key, m.value FROM samples s,
         json_each(CASE WHEN json_valid(s.metrics) THEN s.metrics ELSE '{}' END) m
  WHERE m.type IN ('integer', 'real');
ALTER TABLE samples DROP COLUMN metrics;
ALTER TABLE bisections ADD COLUMN merge_sha TEXT NOT NULL DEFAULT '';   -- the merge whose branch is searched
ALTER TABLE bisections ADD COLUMN verification TEXT NOT NULL DEFAULT '{}'; -- JSON: step -> line, numbers
CREATE TABLE bisection_marks (
  bisection_id INTEGER NOT NULL REFERENCES bisections(id), commit_sha TEXT NOT NULL,
  mark TEXT NOT NULL,                -- excluded | prebuilt
  PRIMARY KEY (bisection_id, mark, commit_sha)) WITHOUT ROWID;
UPDATE bisections SET merge_sha = COALESCE(json_extract(result, '$.merge'), ''),
                      verification = COALESCE(json_extract(result, '$.verification'), '{}')
  WHERE json_valid(result);
INSERT OR IGNORE INTO bisection_marks (bisection_id, commit_sha, mark)
  SELECT b.id, j.value, 'excluded' FROM bisections b, json_each(b.result, '$.excluded') j
  WHERE json_valid(b.result) AND json_type(b.result, '$.excluded') = 'array' AND j.type = 'text';
INSERT OR IGNORE INTO bisection_marks (bisection_id, commit_sha, mark)
  SELECT b.id, j.value, 'prebuilt' FROM bisections b, json_each(b.result, '$.prebuilt') j
  WHERE json_valid(b.result) AND json_type(b.result, '$.prebuilt') = 'array' AND j.type = 'text';
UPDATE bisections SET result = json_remove(result, '$.merge', '$.verification', '$.excluded', '$.prebuilt')
  WHERE json_valid(result);
)sql",
  // 3: a failed request is retried with backoff, not at once.
  R"sql(
ALTER TABLE requests ADD COLUMN retry_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX requests_claim ON requests(state, machine_group, attempts, id);
)sql",
  // 4: lab machines' health: consecutive infra failures and quarantine (ssh boxes).
  R"sql(
CREATE TABLE machine_state (
  name TEXT PRIMARY KEY, consecutive_infra INTEGER NOT NULL DEFAULT 0, quarantined INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '', updated_at INTEGER NOT NULL DEFAULT 0);
)sql",
  // 5: the lab's handle of a visit that lives outside the daemon (a LAVA job id), stored before the visit waits, so
  // a restarted daemon follows that job on the same machine instead of submitting it again.
  R"sql(
ALTER TABLE requests ADD COLUMN lab_handle TEXT NOT NULL DEFAULT '';
)sql",
  // 6: one mail per culprit per tree and job: a report that repeats an earlier one names it and is not mailed
  // (no foreign key: deleting the first bisection must not fail on its repeats); the look-up by culprit.
  R"sql(
ALTER TABLE reports ADD COLUMN repeat_of INTEGER;
CREATE INDEX bisections_culprit ON bisections(tree, job, culprit);
)sql",
  // 7: what a bisection cost: runs, builds and boots count every sample its own requests stored (search,
  // verification, merge phases); the runs it reused from others (the alert's, the watch's) are counted apart.
  R"sql(
ALTER TABLE bisections ADD COLUMN boots INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bisections ADD COLUMN runs_reused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bisections ADD COLUMN reused_earlier INTEGER NOT NULL DEFAULT 0; -- of phases before a merge recursion
)sql",
  // 8: the report with every significant row of its comparison table (the mail caps them); '' when the mail
  // already has them all.
  R"sql(
ALTER TABLE reports ADD COLUMN text_all TEXT NOT NULL DEFAULT '';
)sql",
  // 9: machine time: the wall time of every visit a request had (failed and interrupted ones too: the machine was
  // held all the same), and its sum over a bisection's requests.
  R"sql(
ALTER TABLE requests ADD COLUMN machine_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE bisections ADD COLUMN machine_seconds REAL NOT NULL DEFAULT 0;
)sql",
  // 10: the watcher's last fetch error per tree (a remote that times out or refuses), for `tree show` and `status`.
  R"sql(
ALTER TABLE trees ADD COLUMN watch_error TEXT NOT NULL DEFAULT '';
ALTER TABLE trees ADD COLUMN watch_error_at INTEGER NOT NULL DEFAULT 0;
)sql",
  // 11: a commit flag names the job's definition (a hash of its stored text): a changed job starts with no flags.
  // A second attempt after the commit's own failure goes to another machine when the group has one.
  // The rows of before, raised by a single failure under the old rule and for no known definition, are dropped:
  // their commits are measured again (a stored build failure is rebuilt once) and flagged on evidence.
  R"sql(
DROP TABLE commit_flags;
CREATE TABLE commit_flags (
  job TEXT NOT NULL, definition TEXT NOT NULL, commit_sha TEXT NOT NULL, variant TEXT NOT NULL DEFAULT '',
  flag TEXT NOT NULL,                -- unbuildable | unbootable | unrunnable | infra
  count INTEGER NOT NULL DEFAULT 1, message TEXT, updated_at INTEGER NOT NULL,
  PRIMARY KEY (job, definition, commit_sha, variant, flag));
CREATE INDEX commit_flags_commit ON commit_flags(commit_sha);
-- the machine where a request met a failure of the commit's own once: another machine of the group may take the
-- second attempt at once, that one only at retry_at
ALTER TABLE requests ADD COLUMN retry_elsewhere TEXT NOT NULL DEFAULT '';
)sql",
  // 12: every watcher decision is a detection row (baseline, below threshold, failed with its request, rewritten
  // history with the commit its bisection starts from); a branch's own watch error (deleted upstream); when a tree
  // was last fetched. Baselines of trees removed earlier go: a tree added again under that name starts clean.
  R"sql(
ALTER TABLE detections ADD COLUMN rewritten INTEGER NOT NULL DEFAULT 0;
ALTER TABLE detections ADD COLUMN base TEXT NOT NULL DEFAULT '';
ALTER TABLE detections ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE detections ADD COLUMN request_id INTEGER;
ALTER TABLE heads ADD COLUMN error TEXT NOT NULL DEFAULT '';
ALTER TABLE heads ADD COLUMN error_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trees ADD COLUMN polled_at INTEGER NOT NULL DEFAULT 0;
DELETE FROM heads WHERE tree IN (SELECT name FROM trees WHERE removed = 1);
)sql"};

Result<int> current_version(Connection& connection) {
  BISECTD_TRY_ASSIGN(auto stmt, connection.prepare("PRAGMA user_version"));
  BISECTD_TRY(stmt.step());
  return static_cast<int>(stmt.column_int(0));
}

} // namespace

Status migrate(Connection& connection, int target) {
  std::lock_guard lock(connection.mutex());
  BISECTD_TRY_ASSIGN(int version, current_version(connection));
  if (version > k_schema_version) {
    return make_error(ErrorCode::invalid_config, "database schema version " + std::to_string(version) +
                                                   " is newer than this bisectd (" + std::to_string(k_schema_version) +
                                                   "); upgrade bisectd");
  }
  for (int v = version; v < std::min(target, k_schema_version); ++v) {
    Transaction txn(connection);
    BISECTD_TRY(txn.begin());
    BISECTD_TRY(connection.exec(k_migrations[static_cast<std::size_t>(v)]));
    BISECTD_TRY(connection.exec("PRAGMA user_version = " + std::to_string(v + 1)));
    BISECTD_TRY(txn.commit());
  }
  return {};
}

} // namespace bisectd::storage
