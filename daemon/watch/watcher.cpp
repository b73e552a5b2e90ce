#include "daemon/watch/watcher.hpp"

#include "base/strings.hpp"
#include "bisect/detect.hpp"
#include "daemon/core/requests.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bisectd::daemon::watch {

namespace {

// Watch requests of one head that may fail (each with its own bounded retries) before the head is given up.
constexpr std::int64_t k_max_watch_requests = 2;

// The decision on `head` (its last measured head to its newest), in the job's primary metric.
storage::DetectionRow head_row(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                               const storage::HeadRow& head, storage::DetectionState state) {
  storage::DetectionRow row;
  row.tree = tree.name;
  row.branch = branch;
  row.job = job.name;
  row.good = head.tested; // "" for a first head
  row.bad = head.seen;
  row.metric = job.metrics.primary;
  row.state = state;
  return row;
}

} // namespace

Result<std::vector<double>> metric_values(storage::SampleStore& samples, const std::string& job,
                                          const std::string& metric, const std::vector<std::int64_t>& requests,
                                          const std::string& commit) {
  std::vector<storage::MetricSample> rows;
  if (requests.empty()) {
    BISECTD_TRY_ASSIGN(rows, samples.metric_samples(job, {commit}, metric));
  } else {
    BISECTD_TRY_ASSIGN(rows, samples.request_metric_samples(requests, metric));
  }
  std::vector<double> out;
  for (const auto& s : rows) {
    if (s.value > 0) {
      out.push_back(s.value);
    }
  }
  return out;
}

std::vector<storage::TreeRow> Watcher::due_trees(std::int64_t now) {
  std::vector<storage::TreeRow> due;
  auto trees = m_stores.trees.trees();
  if (!trees) {
    return due;
  }
  for (const auto& tree : *trees) {
    auto& last = m_last_poll[tree.name];
    auto interval = tree.poll_interval_s > 0 ? tree.poll_interval_s : m_poll_interval.count();
    if (last == 0 || now - last >= interval) {
      last = now;
      (void)m_stores.trees.set_polled(tree.name, now); // `tree show`: when the next poll is due
      due.push_back(tree);
    }
  }
  return due;
}

void Watcher::on_heads(const storage::TreeRow& tree, const std::map<std::string, std::string>& heads) {
  std::string missing;
  for (const auto& branch : tree.branches) {
    auto head = heads.find(branch);
    if (head == heads.end()) {
      missing = "branch '" + branch + "' not found in " + tree.url;
      record_branch_error(tree, branch,
                          "deleted upstream: not found in " + base::strip_url_userinfo(tree.url) +
                            "; not watched until it is back");
      continue;
    }
    record_branch_error(tree, branch, "");
    auto row = m_stores.trees.head(tree.name, branch);
    if (row && *row && (*row)->seen == head->second) {
      continue;
    }
    spdlog::info("tree {}: {} is now {}", tree.name, branch, base::short_sha(head->second));
    (void)m_stores.trees.set_head_seen(tree.name, branch, head->second);
  }
  record_watch_error(tree, missing);
}

void Watcher::on_fetch_failed(const storage::TreeRow& tree, const std::string& error) {
  if (error != tree.watch_error) {
    spdlog::warn("fetch {}: {}", tree.name, error);
  }
  record_watch_error(tree, error);
}

void Watcher::record_watch_error(const storage::TreeRow& tree, const std::string& error) {
  if (error == tree.watch_error) {
    return;
  }
  if (error.empty()) {
    spdlog::info("tree {}: fetched again", tree.name);
  }
  auto stored = m_stores.trees.set_watch_error(tree.name, error);
  if (!stored && stored.error().code != ErrorCode::not_found) { // not_found: removed while it was being fetched
    spdlog::error("tree {}: {}", tree.name, stored.error().message);
  }
}

void Watcher::record_branch_error(const storage::TreeRow& tree, const std::string& branch, const std::string& error) {
  auto row = m_stores.trees.head(tree.name, branch);
  auto known = row && *row ? (*row)->error : std::string();
  if (known == error) {
    return;
  }
  if (error.empty()) {
    spdlog::info("tree {}: branch '{}' is back: watched again", tree.name, branch);
  } else {
    spdlog::warn("tree {}: branch '{}' {}", tree.name, branch, error);
  }
  (void)m_stores.trees.set_head_error(tree.name, branch, error);
}

void Watcher::log_failure(const std::string& key, const Status& status) {
  auto& logged = m_failing[key];
  if (status) {
    logged.clear();
    return;
  }
  if (logged != status.error().message) {
    logged = status.error().message;
    spdlog::error("watch {}: {} (logged again only when it changes)",
                  base::escape_control(key, base::LineBreaks::escape), logged);
  }
}

void Watcher::advance() {
  auto trees = m_stores.trees.trees();
  if (!trees) {
    return;
  }
  for (const auto& tree : *trees) {
    auto job = m_jobs.get(tree.job);
    if (!job) {
      continue;
    }
    for (const auto& branch : tree.branches) {
      log_failure(tree.name + ":" + branch, advance_branch(tree, branch, **job));
    }
  }
  m_confirmation.advance();
}

Status Watcher::enqueue_watch(const storage::TreeRow& tree, const Job& job, const std::string& commit) {
  BISECTD_TRY(m_stores.queue.enqueue(make_request(job, tree.name, commit, storage::Purpose::watch, job.runs)));
  spdlog::info("watch {}: measuring head {}", tree.name, base::short_sha(commit));
  return {};
}

// One step of a branch: detect on the series, measure a new head, take the first head as the baseline, or compare
// the new head with the last measured one. A branch deleted upstream is not watched until it is back.
Status Watcher::advance_branch(const storage::TreeRow& tree, const std::string& branch, const Job& job) {
  BISECTD_TRY_ASSIGN(auto head, m_stores.trees.head(tree.name, branch));
  if (!head || head->seen.empty() || !head->error.empty()) {
    return {};
  }
  BISECTD_TRY_ASSIGN(bool confirming, m_confirmation.confirming(tree.name, branch, job.name));
  if (!confirming && !head->tested.empty()) {
    BISECTD_TRY(check_series(tree, branch, job, head->tested));
    BISECTD_TRY_ASSIGN(confirming, m_confirmation.confirming(tree.name, branch, job.name));
  }
  if (head->seen == head->tested) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto open, m_stores.queue.open_requests_for(job.name, head->seen));
  if (open > 0) {
    return {}; // still being measured
  }
  BISECTD_TRY_ASSIGN(auto flags, m_stores.samples.flags(flag_key(job, head->seen)));
  if (flags.is_skipped()) {
    return record_unmeasurable(tree, branch, job, *head); // cannot be compared; the next head is
  }
  // Measured by a watch request, so that the head joins the series (samples of other purposes count too).
  BISECTD_TRY_ASSIGN(bool watched, m_series.is_watched(tree.name, job, head->seen));
  if (!watched) {
    BISECTD_TRY_ASSIGN(auto failed, m_stores.queue.failed_requests_for(job.name, head->seen, storage::Purpose::watch));
    if (failed >= k_max_watch_requests) {
      return record_unmeasurable(tree, branch, job, *head); // the next pushed head is measured instead
    }
    return enqueue_watch(tree, job, head->seen);
  }
  if (head->tested.empty()) {
    spdlog::info("watch {}:{}: baseline {}", tree.name, branch, base::short_sha(head->seen));
    BISECTD_TRY(record_head(tree, branch, job, *head, storage::DetectionState::baseline, "first measured head"));
    return m_stores.trees.set_head_tested(tree.name, branch, head->seen);
  }
  if (confirming) {
    return {}; // one shift at a time: the new head is compared once the pending one is decided
  }
  return compare_heads(tree, branch, job, *head);
}

Status Watcher::record_head(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                            const storage::HeadRow& head, storage::DetectionState state, const std::string& note,
                            std::int64_t request_id) {
  BISECTD_TRY_ASSIGN(auto existing, m_stores.detections.detection(tree.name, job.name, head.tested, head.seen));
  if (existing) {
    return {}; // stored before a crash or a restart
  }
  auto row = head_row(tree, branch, job, head, state);
  row.note = note;
  row.request_id = request_id;
  BISECTD_TRY(m_stores.detections.add_detection(row));
  return {};
}

// A head that cannot be measured (its watch requests failed, or it is flagged for the job) is listed once as
// failed, with why and the request; it is not compared, and the last measured head stays the baseline.
Status Watcher::record_unmeasurable(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                                    const storage::HeadRow& head) {
  BISECTD_TRY_ASSIGN(auto existing, m_stores.detections.detection(tree.name, job.name, head.tested, head.seen));
  if (existing) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto request, m_stores.queue.last_failed_request(job.name, head.seen, storage::Purpose::watch));
  std::string why;
  if (request) {
    why = "request " + std::to_string(request->id) + ": " + (request->error.empty() ? "failed" : request->error);
  } else {
    BISECTD_TRY_ASSIGN(auto flags, m_stores.samples.flags(flag_key(job, head.seen)));
    why = "skipped for job " + job.name + ": " + flags.skip_reason();
  }
  spdlog::warn("watch {}:{}: head {} cannot be measured ({}): waiting for the next head", tree.name, branch,
               base::short_sha(head.seen), why);
  return record_head(tree, branch, job, head, storage::DetectionState::failed,
                     "head " + base::short_sha(head.seen) + " not measured: " + why, request ? request->id : 0);
}

Status Watcher::compare_heads(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                              const storage::HeadRow& head) {
  BISECTD_TRY_ASSIGN(auto existing, m_stores.detections.detection(tree.name, job.name, head.tested, head.seen));
  if (existing) {
    // Decided already; a crash between the decision and the new baseline must not hold the branch for good.
    return storage::is_deciding(existing->state) ? Status{}
                                                 : m_stores.trees.set_head_tested(tree.name, branch, head.seen);
  }
  bool rewritten = false;
  BISECTD_TRY(m_repos.with_repo(tree.name, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(bool contains, repo.is_ancestor(head.tested, head.seen));
    rewritten = !contains;
    return {};
  }));
  if (rewritten) {
    spdlog::info("watch {}:{}: {} does not contain the last measured head {}: rewritten history, compared as two "
                 "commits",
                 tree.name, branch, base::short_sha(head.seen), base::short_sha(head.tested));
  }
  double primary_change = 0;
  for (const auto& metric : alerting_metrics(job)) {
    BISECTD_TRY_ASSIGN(auto before, metric_values(m_stores.samples, job.name, metric, {}, head.tested));
    BISECTD_TRY_ASSIGN(auto after, metric_values(m_stores.samples, job.name, metric, {}, head.seen));
    auto test = bisect::confirm_shift(before, after, job.metrics.threshold);
    // Size alone decides: the two heads were measured at different times, and lab levels drift (a QEMU lab here
    // read 30 % lower ten minutes later), so a significance test across that gap means little either way. The
    // interleaved confirmation is what decides whether the shift is real.
    if (std::abs(test.relative_change) >= job.metrics.threshold) {
      spdlog::info("watch {}:{}: {} vs {}: {} {}", tree.name, branch, base::short_sha(head.seen),
                   base::short_sha(head.tested), metric, base::signed_percent(test.relative_change));
      auto proposal = head_row(tree, branch, job, head, storage::DetectionState::confirming);
      proposal.metric = metric;
      proposal.change = test.relative_change;
      proposal.p_value = test.p_value;
      proposal.rewritten = rewritten;
      return m_confirmation.start(proposal, job);
    }
    if (metric == job.metrics.primary) {
      primary_change = test.relative_change;
      spdlog::info("watch {}:{}: {} vs {}: {} (below the threshold), new baseline", tree.name, branch,
                   base::short_sha(head.seen), base::short_sha(head.tested),
                   base::signed_percent(test.relative_change));
    }
  }
  auto row = head_row(tree, branch, job, head, storage::DetectionState::below_threshold);
  row.change = primary_change;
  row.rewritten = rewritten;
  if (rewritten) {
    row.note = "rewritten history: " + base::short_sha(head.seen) + " does not contain " + base::short_sha(head.tested);
  }
  BISECTD_TRY(m_stores.detections.add_detection(row));
  return m_stores.trees.set_head_tested(tree.name, branch, head.seen);
}

// The heads the branch had, whether or not a rewrite dropped them since: its detection rows' new heads.
Result<std::set<std::string>> Watcher::branch_heads(const std::string& tree, const std::string& branch,
                                                    const std::string& job) {
  BISECTD_TRY_ASSIGN(auto rows, m_stores.detections.detections(tree));
  std::set<std::string> heads;
  for (const auto& d : rows) {
    if (d.branch == branch && d.job == job) {
      heads.insert(d.bad);
    }
  }
  return heads;
}

Status Watcher::check_series(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                             const std::string& tip) {
  auto key = tree.name + "\n" + branch;
  if (m_series_checked[key] == tip) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto heads, branch_heads(tree.name, branch, job.name));
  BISECTD_TRY_ASSIGN(auto series, m_series.load_branch(tree.name, job, tip, heads));
  for (const auto& c : find_candidates(series, job)) {
    bool on_branch = false;
    BISECTD_TRY(m_repos.with_repo(tree.name, [&](vcs::Repo& repo) -> Status {
      BISECTD_TRY_ASSIGN(on_branch, repo.is_ancestor(c.bad, tip));
      return {};
    }));
    if (!on_branch) {
      continue; // a shift within history a rewrite dropped: not the branch's any more
    }
    BISECTD_TRY_ASSIGN(bool covered,
                       is_covered(m_repos, m_stores.detections, m_stores.bisections, tree.name, branch, job, c));
    BISECTD_TRY_ASSIGN(auto existing, m_stores.detections.detection(tree.name, job.name, c.good, c.bad));
    if (covered || existing) {
      spdlog::info("watch {}:{}: series: {} {} in {}..{} is already accounted for", tree.name, branch, c.metric,
                   base::signed_percent(c.point.relative_change), base::short_sha(c.good), base::short_sha(c.bad));
      continue;
    }
    spdlog::info("watch {}:{}: series of {} heads: {} {} at {} (range {}..{}, p={:.3g})", tree.name, branch,
                 series.commits.size(), c.metric, base::signed_percent(c.point.relative_change),
                 base::short_sha(c.step_bad), base::short_sha(c.good), base::short_sha(c.bad), c.point.p_value);
    // The key stays unmarked: once this one is decided the series is checked again for the next candidate.
    auto proposal = head_row(tree, branch, job, storage::HeadRow{tree.name, branch, c.bad, c.good, "", 0},
                             storage::DetectionState::confirming);
    proposal.metric = c.metric;
    proposal.change = c.point.relative_change;
    proposal.p_value = c.point.p_value;
    return m_confirmation.start(proposal, job);
  }
  m_series_checked[key] = tip;
  return {};
}

} // namespace bisectd::daemon::watch
