#pragma once
// Plain rows as stored. Domain types live with their modules; the daemon converts at the edge.

#include <cstdint>
#include <string>

namespace bisectd::storage {

struct TreeRow {
  std::int64_t id = 0;
  std::string name, url;
  std::string branches_json = "[]";
  std::string job;
  std::string notify_json = "[]", mail_cc_json = "[]";
  bool is_private = true;
  std::int64_t poll_interval_s = 60;
  std::int64_t created_at = 0;
};

struct JobRow {
  std::string name, path, yaml;
  std::int64_t created_at = 0;
};

struct HeadRow {
  std::string tree, branch, seen, tested;
};

struct RequestRow {
  std::int64_t id = 0;
  std::string tree, job, commit;
  std::string purpose;               // watch | confirm | bisect | verify
  std::int64_t bisection_id = 0;     // 0: none
  std::int64_t detection_id = 0;     // 0: none
  std::string machine_group, pin_machine;
  std::int64_t runs = 1;
  std::string variant;               // "" normal build; e.g. "align64" or "revert:<sha>" for verification builds
  std::string state = "queued";      // queued | building | running | done | failed
  std::int64_t attempts = 0;
  std::string machine, error, error_code;
  std::int64_t created_at = 0, updated_at = 0;
};

struct SampleRow {
  std::int64_t id = 0;               // also the global order in time (seq)
  std::int64_t request_id = 0;
  std::string tree, job, commit, variant, machine, boot_id;
  std::int64_t run = 0;
  std::string metrics_json;          // {"name": value, ...}
  bool verification = false;
  std::string log_path;
  std::int64_t created_at = 0;
};

struct DetectionRow {
  std::int64_t id = 0;
  std::string tree, branch, job, good, bad, metric;
  std::string state;                 // confirming | confirmed | rejected
  double change = 0, p_value = 1;
  std::int64_t bisection_id = 0;
  std::int64_t created_at = 0;
};

struct BisectionRow {
  std::int64_t id = 0;
  std::string tree, branch, job, metric, good, bad, range_good, range_bad;
  std::string state = "running";     // running | found | not_found | failed
  std::string culprit;               // empty: none
  double p_culprit = 0;
  std::string result_json = "{}";
  std::int64_t runs = 0, builds = 0;
  std::string origin = "manual";     // manual | detect
  std::string error;
  std::int64_t created_at = 0, finished_at = 0;
};

struct EventRow {
  std::int64_t at = 0;
  std::string message;
};

struct ReportRow {
  std::int64_t id = 0, bisection_id = 0;
  std::string subject, sender, to_json, cc_json, message_id, in_reply_to, body, text;
  std::int64_t created_at = 0;
  bool sent = false;
};

struct OutboxRow {
  std::int64_t id = 0, report_id = 0;
  std::string state;                 // pending | sent | failed
  std::int64_t attempts = 0, next_attempt_at = 0;
  std::string last_error;
};

} // namespace bisectd::storage
