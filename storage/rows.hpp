#pragma once
// Plain rows as stored, with typed states (storage/states.hpp). Domain types live with their modules; the daemon
// converts at the edge.

#include "storage/states.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace bisectd::storage {

struct TreeRow {
  std::int64_t id = 0;
  std::string name, url;
  std::vector<std::string> branches;
  std::string job;
  std::vector<std::string> notify, mail_cc;
  bool is_private = true;
  std::int64_t poll_interval_s = 60;
  std::int64_t created_at = 0;
  // Why the watcher's last fetch failed ("" after a good one) and since when (unix seconds, 0 when fine).
  std::string watch_error;
  std::int64_t watch_error_at = 0;
  std::int64_t polled_at = 0; // when the watcher last fetched it (unix seconds, 0: not yet)
};

struct JobRow {
  std::string name, path, yaml;
  std::int64_t created_at = 0;
};

struct HeadRow {
  std::string tree, branch, seen, tested; // tested: the last measured head
  // Why the branch is not watched now ("" when it is: e.g. deleted upstream) and since when (unix seconds).
  std::string error;
  std::int64_t error_at = 0;
};

struct RequestRow {
  std::int64_t id = 0;
  std::string tree, job, commit;
  Purpose purpose = Purpose::bisect;
  std::int64_t bisection_id = 0; // 0: none
  std::int64_t detection_id = 0; // 0: none
  std::string machine_group, pin_machine;
  std::int64_t runs = 1;
  std::string variant; // "" normal build; e.g. "layout" or "revert:<sha>" for verification builds
  RequestState state = RequestState::queued;
  std::int64_t attempts = 0; // times claimed
  std::int64_t retry_at = 0; // queued again after a failure: not claimed before this unix time
  std::string machine, error, error_code;
  std::int64_t created_at = 0, updated_at = 0;
  std::string lab_handle; // a running visit's handle in the lab (LAVA job id); "" when none
  double machine_seconds = 0; // wall time of its visits so far, every attempt

  [[nodiscard]] bool is_open() const { return storage::is_open(state); }
};

struct SampleRow {
  std::int64_t id = 0; // also the global order in time (seq)
  std::int64_t request_id = 0;
  std::string tree, job, commit, variant, machine, boot_id;
  std::int64_t run = 0;
  std::map<std::string, double> metrics;
  bool verification = false;
  std::string log_path;
  std::int64_t created_at = 0;
};

// One metric of one sample: what the engine, the detector and the verifier read (no other metric is loaded).
struct MetricSample {
  std::int64_t id = 0; // the sample's id (its order in time)
  std::string commit, machine, boot_id;
  double value = 0;
  bool verification = false;
  std::int64_t request_id = 0; // the request that measured it
};

// What a bisection's own requests caused, from the stored samples and requests.
struct BisectionCost {
  std::int64_t runs = 0;   // samples its requests stored, every variant (verification, revert, layout)
  std::int64_t boots = 0;  // distinct (request, boot) among them
  std::int64_t builds = 0; // distinct (commit, variant) its requests measured or failed to build
  double machine_seconds = 0; // wall time of its requests' visits, every attempt
};

struct DetectionRow {
  std::int64_t id = 0;
  std::string tree, branch, job, good, bad, metric;
  DetectionState state = DetectionState::confirming;
  double change = 0, p_value = 1;
  std::int64_t bisection_id = 0;
  std::int64_t created_at = 0;
  // good is not an ancestor of bad: the branch was rewritten between the two heads.
  bool rewritten = false;
  // Across a rewrite: the newest measured ancestor of bad (or the merge base) the bisection starts from.
  std::string base;
  std::string note;            // why, in words: a failure's reason, what a rewrite's comparison found
  std::int64_t request_id = 0; // the failed request a `failed` row is about (0: none)
};

struct BisectionRow {
  std::int64_t id = 0;
  std::string tree, branch, job, metric, good, bad, range_good, range_bad;
  BisectionState state = BisectionState::running;
  std::string culprit; // empty: none
  double p_culprit = 0;
  // The bisection's working state, each in its own column or table:
  std::string merge;              // the merge whose branch range_good..range_bad searches; empty: mainline
  std::set<std::string> excluded; // culprits verified implausible: prior 0 from then on
  std::set<std::string> prebuilt; // commits the prebuilder built for it (builds it spent)
  // What the bisection shows, written whole by the driver and the verifier, never read back by them:
  std::string result_json = "{}";       // engine summary: verdict, credible set, shift, trace
  std::string verification_json = "{}"; // verification steps: step -> line, numbers
  // What it cost: runs, builds and boots its own requests caused (every phase), runs of others it reused.
  std::int64_t runs = 0, builds = 0, boots = 0, runs_reused = 0;
  std::int64_t reused_earlier = 0; // runs_reused of the phases before the search moved into a merged branch
  double machine_seconds = 0;      // wall time of its requests' visits, every attempt
  Origin origin = Origin::manual;
  std::string error;
  std::int64_t created_at = 0, finished_at = 0;
};

struct EventRow {
  std::int64_t at = 0;
  std::string message;
};

struct ReportRow {
  std::int64_t id = 0, bisection_id = 0;
  std::string subject, sender;
  std::vector<std::string> to, cc;
  std::string message_id, in_reply_to, body, text;
  std::string text_all; // the message with every row of its table (`report --all`); "" when `text` has them all
  std::int64_t created_at = 0;
  bool sent = false;
  std::int64_t repeat_of = 0; // the earlier report of the same culprit (tree, job) it answers; 0: none.
                              // A repeat is stored but never queued for mail.
};

struct OutboxRow {
  std::int64_t id = 0, report_id = 0;
  OutboxState state = OutboxState::pending;
  std::int64_t attempts = 0, next_attempt_at = 0;
  std::string last_error;
};

// Whom a commit flag speaks of: a commit's build (`variant`) for a job as the job was defined when the failures were
// seen (`definition`: a hash of the job's stored text), so a changed job starts with no flags.
struct FlagKey {
  std::string job, definition, commit, variant;
};

// One raised flag as stored: how often, and the last failure's message (why).
struct FlagRow {
  FlagKey key;
  CommitFlag flag = CommitFlag::unrunnable;
  std::int64_t count = 0;
  std::string message;
  std::int64_t updated_at = 0;
};

struct BuildRecord {
  std::string job, commit, variant;
  std::string outcome; // ok | failed | infra
  double seconds = 0;
  std::string log_path;
};

} // namespace bisectd::storage
