#pragma once
// The API's resources, one handler per route (the table is in api.cpp). Each reads or writes through the
// collaborators in ApiContext.

#include "daemon/api/router.hpp"
#include "daemon/core/bisection_starter.hpp"
#include "daemon/core/job_catalog.hpp"
#include "daemon/core/lab_view.hpp"
#include "daemon/core/tree_repos.hpp"
#include "daemon/core/wake.hpp"
#include "storage/bisection_store.hpp"
#include "storage/detection_store.hpp"
#include "storage/outbox_store.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"
#include "storage/tree_store.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace bisectd::daemon::api {

// LAVA's callback and artifact routes (daemon/api/lava.cpp), wired by the daemon from the lab's lava machines.
struct LavaHooks {
  std::string callback_secret;              // what LAVA sends in Authorization; "" = no callback
  std::function<void(std::int64_t)> notify; // wakes the visit following that job
  std::filesystem::path publish_dir;        // builds published for http artifact URLs; "" = none
};

// Serialises changes to the trees table. A tree add holds `lock` only to check and claim its name (in `adding`)
// and to store the row, not across its clone: a remote that stalls must not hold up other adds and settings.
struct TreeChanges {
  std::mutex lock;
  std::set<std::string> adding; // names whose add is mirroring now
};

struct ApiContext {
  storage::TreeStore& trees;
  storage::QueueStore& queue;
  storage::SampleStore& samples;
  storage::BisectionStore& bisections;
  storage::DetectionStore& detections;
  storage::OutboxStore& outbox; // a report's delivery state
  TreeRepos& repos;
  JobCatalog& jobs;
  const LabView& lab;
  BisectionStarter& starter;
  Wake wake;
  std::filesystem::path configs_dir;                                         // where job-relative paths fall back to
  std::chrono::seconds poll_interval;                                        // a new tree's default
  std::filesystem::path data_dir;                                            // shown by status
  std::int64_t started_at = 0;                                               // unix time, for status' uptime
  bool public_reads = false;                                                 // logs readable without the token
  std::string unsandboxed_because;                                           // status: empty when bwrap runs the code
  std::shared_ptr<TreeChanges> tree_changes = std::make_shared<TreeChanges>();
  // Returns a quarantined machine to service: false when it was not quarantined, not_found for no such machine.
  std::function<Result<bool>(const std::string& name)> release_machine;
  // Checks a machine without a visit (lab::Machine::check): not_found, naming the machines, for no such machine.
  std::function<Result<std::vector<lab::CheckLine>>(const std::string& name, const lab::CheckOptions& options)>
    check_machine;
  LavaHooks lava{};
};

// status.cpp
HttpResponse get_status(ApiContext& c, const Call& call);
HttpResponse get_machines(ApiContext& c, const Call& call);
HttpResponse post_machine_release(ApiContext& c, const Call& call);
HttpResponse post_machine_check(ApiContext& c, const Call& call);
HttpResponse get_jobs(ApiContext& c, const Call& call);
// trees.cpp
HttpResponse get_trees(ApiContext& c, const Call& call);
HttpResponse get_tree(ApiContext& c, const Call& call);
HttpResponse post_tree(ApiContext& c, const Call& call);
HttpResponse post_tree_settings(ApiContext& c, const Call& call);
HttpResponse delete_tree(ApiContext& c, const Call& call);
// bisections.cpp
HttpResponse get_bisections(ApiContext& c, const Call& call);
HttpResponse post_bisection(ApiContext& c, const Call& call);
HttpResponse get_report(ApiContext& c, const Call& call);
HttpResponse cancel_bisection(ApiContext& c, const Call& call);
HttpResponse retry_bisection(ApiContext& c, const Call& call);
HttpResponse delete_bisection(ApiContext& c, const Call& call);
// detections.cpp
HttpResponse get_detections(ApiContext& c, const Call& call);
// logs.cpp
HttpResponse get_log(ApiContext& c, const Call& call);
HttpResponse get_commit_build_log(ApiContext& c, const Call& call);
// report_mail.cpp
// Why bisection `b` has no report, as one line ("bisection 4 is still running: ...").
std::string no_report_reason(ApiContext& c, const storage::BisectionRow& b);
// {"state": sent|sending|pending|failed|not_mailed, "why"}: what became of the report's mail. `repeat_of`: the
// bisection whose report it repeats (null when none is known).
nlohmann::json report_mail_json(ApiContext& c, const storage::ReportRow& r, const nlohmann::json& repeat_of);
// queue.cpp
HttpResponse get_queue(ApiContext& c, const Call& call);
// bisection_detail.cpp
HttpResponse get_bisection(ApiContext& c, const Call& call);
// lava.cpp
HttpResponse post_lava_notify(ApiContext& c, const Call& call);
HttpResponse get_lava_artifact(ApiContext& c, const Call& call);
// results.cpp
HttpResponse get_results(ApiContext& c, const Call& call);
HttpResponse get_noise(ApiContext& c, const Call& call);
// `rev` resolved in `tree`'s mirror to a full sha (not_found for an unknown tree or revision); results and compare.
Result<std::string> resolve_commit(ApiContext& c, const std::string& tree, const std::string& rev);
// A flag of the query string ("1"/"true", "0"/"false" or absent); an error names the key and the value.
Result<bool> query_flag(const Call& call, const std::string& key);
// commit_flags.cpp
HttpResponse post_commit_clear(ApiContext& c, const Call& call);
// `rows` as the API shows them: each flag with its reason, whether it is the job's current definition's and skips.
nlohmann::json commit_flags_json(ApiContext& c, const std::vector<storage::FlagRow>& rows);
// Why the commit of `key` is skipped ("" when it is not): its flags that are verdicts, with their reasons.
std::string skipped_because(ApiContext& c, const storage::FlagKey& key);
// compare.cpp
HttpResponse get_compare(ApiContext& c, const Call& call);

} // namespace bisectd::daemon::api
