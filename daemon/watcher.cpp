#include "daemon/watcher.hpp"

#include "base/strings.hpp"
#include "bisect/detect.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace bisectd::daemon {

namespace {

constexpr double k_inconclusive_p = 0.2;       // above this the data show no shift: reject at once
constexpr std::size_t k_max_confirm_runs = 40; // per side; past this an unconfirmed shift is rejected
constexpr int k_first_round_cap = 20;          // per side in the first round, whatever the noise model asks

std::vector<std::string> branches_of(const storage::TreeRow& tree) { return json_string_list(tree.branches_json); }

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", fraction * 100.0);
  return buffer;
}

} // namespace

std::vector<storage::TreeRow> Watcher::due_trees(std::int64_t now) {
  std::vector<storage::TreeRow> due;
  auto trees = m_context.store->trees();
  if (!trees) {
    return due;
  }
  for (const auto& tree : *trees) {
    auto& last = m_last_poll[tree.name];
    auto interval = tree.poll_interval_s > 0 ? tree.poll_interval_s : m_context.config.poll_interval.count();
    if (last == 0 || now - last >= interval) {
      last = now;
      due.push_back(tree);
    }
  }
  return due;
}

void Watcher::on_heads(const storage::TreeRow& tree, const std::map<std::string, std::string>& heads) {
  for (const auto& branch : branches_of(tree)) {
    auto head = heads.find(branch);
    if (head == heads.end()) {
      spdlog::warn("tree {}: branch '{}' not found", tree.name, branch);
      continue;
    }
    auto row = m_context.store->head(tree.name, branch);
    if (row && *row && (*row)->seen == head->second) {
      continue;
    }
    spdlog::info("tree {}: {} is now {}", tree.name, branch, base::short_sha(head->second));
    (void)m_context.store->set_head_seen(tree.name, branch, head->second);
  }
}

void Watcher::advance() {
  auto trees = m_context.store->trees();
  if (!trees) {
    return;
  }
  for (const auto& tree : *trees) {
    auto job = m_context.jobs->get(tree.job);
    if (!job) {
      continue;
    }
    for (const auto& branch : branches_of(tree)) {
      if (auto status = advance_branch(tree, branch, **job); !status) {
        spdlog::error("watch {}:{}: {}", tree.name, branch, status.error().message);
      }
    }
  }
  auto confirming = m_context.store->detections_in_state("confirming");
  for (const auto& detection : confirming.value_or(std::vector<storage::DetectionRow>{})) {
    if (auto status = advance_detection(detection); !status) {
      spdlog::error("detection {}: {}", detection.id, status.error().message);
    }
  }
}

Status Watcher::enqueue_watch(const storage::TreeRow& tree, const Job& job, const std::string& commit) {
  storage::RequestRow r;
  r.tree = tree.name;
  r.job = job.name;
  r.commit = commit;
  r.purpose = "watch";
  r.machine_group = job.machine_group;
  r.runs = job.runs;
  BISECTD_TRY(m_context.store->enqueue(r));
  spdlog::info("watch {}: measuring head {}", tree.name, base::short_sha(commit));
  return {};
}

Status Watcher::advance_branch(const storage::TreeRow& tree, const std::string& branch, const Job& job) {
  BISECTD_TRY_ASSIGN(auto head, m_context.store->head(tree.name, branch));
  if (!head || head->seen.empty()) {
    return {};
  }
  BISECTD_TRY_ASSIGN(bool confirming, branch_confirming(tree.name, branch, job.name));
  if (!confirming && !head->tested.empty()) {
    BISECTD_TRY(check_series(tree, branch, job, head->tested));
    BISECTD_TRY_ASSIGN(confirming, branch_confirming(tree.name, branch, job.name));
  }
  if (head->seen == head->tested) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto open, m_context.store->open_requests_for(job.name, head->seen));
  if (open > 0) {
    return {}; // still being measured
  }
  BISECTD_TRY_ASSIGN(auto flags, m_context.store->flags(job.name, head->seen));
  if (flags["unbuildable"] > 0 || flags["unrunnable"] > 0 || flags["unbootable"] >= 2) {
    return {}; // a broken head cannot be compared; wait for the next one
  }
  // Measured by a watch request, so that the head joins the series (samples of other purposes count too).
  BISECTD_TRY_ASSIGN(bool watched, is_watched(*m_context.store, tree.name, job, head->seen));
  if (!watched) {
    return enqueue_watch(tree, job, head->seen);
  }
  if (head->tested.empty()) {
    spdlog::info("watch {}:{}: baseline {}", tree.name, branch, base::short_sha(head->seen));
    return m_context.store->set_head_tested(tree.name, branch, head->seen);
  }
  if (confirming) {
    return {}; // one shift at a time: the new head is compared once the pending one is decided
  }
  return compare_heads(tree, branch, job, *head);
}

Result<bool> Watcher::branch_confirming(const std::string& tree, const std::string& branch, const std::string& job) {
  BISECTD_TRY_ASSIGN(auto rows, m_context.store->detections_in_state("confirming"));
  return std::any_of(rows.begin(), rows.end(), [&](const storage::DetectionRow& d) {
    return d.tree == tree && d.branch == branch && d.job == job;
  });
}

Status Watcher::compare_heads(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                              const storage::HeadRow& head) {
  BISECTD_TRY_ASSIGN(auto existing, m_context.store->detection(tree.name, job.name, head.tested, head.seen));
  if (existing) {
    return {}; // decided already
  }
  for (const auto& metric : alerting_metrics(job)) {
    BISECTD_TRY_ASSIGN(auto before, values(job, metric, {}, head.tested));
    BISECTD_TRY_ASSIGN(auto after, values(job, metric, {}, head.seen));
    auto test = bisect::confirm_shift(before, after, job.metrics.threshold);
    // Size alone decides: the two heads were measured at different times, and lab levels drift (a QEMU lab here
    // read 30 % lower ten minutes later), so a significance test across that gap means little either way. The
    // interleaved confirmation is what decides whether the shift is real.
    bool apparent = std::abs(test.relative_change) >= job.metrics.threshold;
    if (apparent) {
      spdlog::info("watch {}:{}: {} vs {}: {} {}", tree.name, branch, base::short_sha(head.seen),
                   base::short_sha(head.tested), metric, percent(test.relative_change));
      return start_confirmation({0, tree.name, branch, job.name, head.tested, head.seen, metric, "confirming",
                                 test.relative_change, test.p_value, 0, 0},
                                job);
    }
    if (metric == job.metrics.primary) {
      spdlog::info("watch {}:{}: {} vs {}: {} (below the threshold), new baseline", tree.name, branch,
                   base::short_sha(head.seen), base::short_sha(head.tested), percent(test.relative_change));
    }
  }
  return m_context.store->set_head_tested(tree.name, branch, head.seen);
}

Status Watcher::check_series(const storage::TreeRow& tree, const std::string& branch, const Job& job,
                             const std::string& tip) {
  auto key = tree.name + "\n" + branch;
  if (m_series_checked[key] == tip) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto series, load_series(m_context, tree.name, job, tip));
  for (const auto& c : find_candidates(series, job)) {
    BISECTD_TRY_ASSIGN(bool covered, is_covered(m_context, tree.name, branch, job, c));
    BISECTD_TRY_ASSIGN(auto existing, m_context.store->detection(tree.name, job.name, c.good, c.bad));
    if (covered || existing) {
      spdlog::info("watch {}:{}: series: {} {} in {}..{} is already accounted for", tree.name, branch, c.metric,
                   percent(c.point.relative_change), base::short_sha(c.good), base::short_sha(c.bad));
      continue;
    }
    spdlog::info("watch {}:{}: series of {} heads: {} {} at {} (range {}..{}, p={:.3g})", tree.name, branch,
                 series.commits.size(), c.metric, percent(c.point.relative_change), base::short_sha(c.step_bad),
                 base::short_sha(c.good), base::short_sha(c.bad), c.point.p_value);
    // The key stays unmarked: once this one is decided the series is checked again for the next candidate.
    return start_confirmation({0, tree.name, branch, job.name, c.good, c.bad, c.metric, "confirming",
                               c.point.relative_change, c.point.p_value, 0, 0},
                              job);
  }
  m_series_checked[key] = tip;
  return {};
}

Status Watcher::start_confirmation(const storage::DetectionRow& proposal, const Job& job) {
  auto d = proposal;
  BISECTD_TRY_ASSIGN(d.id, m_context.store->add_detection(d));
  BISECTD_TRY_ASSIGN(int runs, enqueue_confirmation(d, job, confirm_runs(d, job)));
  spdlog::info("detection {}: {}..{} {} {}: confirming with {} interleaved runs per side", d.id,
               base::short_sha(d.good), base::short_sha(d.bad), d.metric, percent(d.change), runs);
  return {};
}

int Watcher::confirm_runs(const storage::DetectionRow& d, const Job& job) {
  int per_side = std::max(m_context.config.confirm_runs, 5);
  auto series = load_series(m_context, d.tree, job, d.bad);
  if (!series || !series->metrics.contains(d.metric)) {
    return per_side;
  }
  auto noise = bisect::estimate_noise(series->metrics.at(d.metric));
  int needed = noise.confirm_runs_for(std::max(job.metrics.threshold, std::abs(d.change)));
  if (needed > per_side) {
    spdlog::info("detection {}: run noise {:.2g}% asks for {} runs per side", d.id, 100.0 * noise.run_sigma,
                 needed);
  }
  return std::clamp(needed, per_side, std::max(per_side, k_first_round_cap));
}

Result<int> Watcher::enqueue_confirmation(const storage::DetectionRow& d, const Job& job, int per_side) {
  // Interleaved on one machine, so lab drift hits both sides alike.
  std::string pin;
  for (const auto& slot : m_context.machines) {
    if (slot.machine->spec().group == job.machine_group) {
      pin = slot.machine->spec().name;
      break;
    }
  }
  int visits = (per_side + job.runs - 1) / job.runs;
  for (int i = 0; i < visits; ++i) {
    for (const auto& commit : {d.good, d.bad}) {
      storage::RequestRow r;
      r.tree = d.tree;
      r.job = job.name;
      r.commit = commit;
      r.purpose = "confirm";
      r.detection_id = d.id;
      r.machine_group = job.machine_group;
      r.pin_machine = pin;
      r.runs = job.runs;
      BISECTD_TRY(m_context.store->enqueue(r));
    }
  }
  return visits * job.runs;
}

Result<std::vector<double>> Watcher::values(const Job& job, const std::string& metric,
                                            const std::vector<std::int64_t>& requests, const std::string& commit) {
  std::vector<storage::SampleRow> samples;
  if (requests.empty()) {
    BISECTD_TRY_ASSIGN(samples, m_context.store->samples(job.name, {commit}));
  } else {
    for (auto id : requests) {
      BISECTD_TRY_ASSIGN(auto rows, m_context.store->samples_of_request(id));
      samples.insert(samples.end(), rows.begin(), rows.end());
    }
  }
  std::vector<double> out;
  for (const auto& s : samples) {
    if (auto v = metric_value(s, metric)) {
      out.push_back(*v);
    }
  }
  return out;
}

Status Watcher::advance_detection(const storage::DetectionRow& d) {
  BISECTD_TRY_ASSIGN(auto requests, m_context.store->requests_for_detection(d.id));
  std::vector<std::int64_t> good_ids, bad_ids;
  for (const auto& r : requests) {
    if (r.state == "queued" || r.state == "building" || r.state == "running") {
      return {};
    }
    (r.commit == d.good ? good_ids : bad_ids).push_back(r.id);
  }
  BISECTD_TRY_ASSIGN(auto job, m_context.jobs->get(d.job));
  auto metric = d.metric.empty() ? job->metrics.primary : d.metric;
  BISECTD_TRY_ASSIGN(auto before, values(*job, metric, good_ids, d.good));
  BISECTD_TRY_ASSIGN(auto after, values(*job, metric, bad_ids, d.bad));
  auto test = bisect::confirm_shift(before, after, job->metrics.threshold);
  // Inconclusive (the shift is there in size but the noise hides it): measure more, up to a cap, like
  // Pinpoint's doubling of attempts.
  bool inconclusive = !test.confirmed && std::abs(test.relative_change) >= job->metrics.threshold &&
                      test.p_value < k_inconclusive_p;
  if (inconclusive && before.size() < k_max_confirm_runs) {
    BISECTD_TRY_ASSIGN(int runs, enqueue_confirmation(d, *job, static_cast<int>(before.size())));
    spdlog::info("detection {}: {} with p={:.3g} after {} runs per side: inconclusive, {} more each", d.id,
                 percent(test.relative_change), test.p_value, before.size(), runs);
    return {};
  }
  if (!test.confirmed) {
    spdlog::info("detection {}: {}..{} not confirmed ({}, p={:.3g}): no bisection", d.id, base::short_sha(d.good),
                 base::short_sha(d.bad), percent(test.relative_change), test.p_value);
    BISECTD_TRY(m_context.store->set_detection_state(d.id, "rejected", 0));
  } else {
    BISECTD_TRY(open_bisection(d, test, std::min(before.size(), after.size())));
  }
  // A head-to-head detection held the branch's new head back: it becomes the baseline once decided.
  BISECTD_TRY_ASSIGN(auto head, m_context.store->head(d.tree, d.branch));
  if (head && head->tested == d.good) {
    return m_context.store->set_head_tested(d.tree, d.branch, d.bad);
  }
  return {};
}

Status Watcher::open_bisection(const storage::DetectionRow& d, const bisect::ShiftTest& test, std::size_t runs) {
  spdlog::info("detection {}: {}..{} confirmed ({}, p={:.3g}): bisecting", d.id, base::short_sha(d.good),
               base::short_sha(d.bad), percent(test.relative_change), test.p_value);
  // A crash after start() but before the state below is stored must not open a second bisection.
  std::int64_t id = 0;
  BISECTD_TRY_ASSIGN(auto existing, m_context.store->bisections(d.tree));
  for (const auto& b : existing) {
    if (b.origin == "detect" && b.job == d.job && b.good == d.good && b.bad == d.bad) {
      id = b.id;
    }
  }
  if (id == 0) {
    BISECTD_TRY_ASSIGN(id, m_bisections.start(d.tree, d.branch, d.good, d.bad, d.job, "detect", d.metric));
    (void)m_context.store->add_event(
      id, "opened by detection " + std::to_string(d.id) + ": " + d.metric + " " + percent(test.relative_change) +
            " confirmed by " + std::to_string(runs) + " interleaved runs per side (p=" +
            std::to_string(test.p_value) + ")");
  }
  // The interleaved runs measured the shift better than the first comparison did: the bisection's prior uses it.
  return m_context.store->set_detection_state(d.id, "confirmed", id, test.relative_change);
}

} // namespace bisectd::daemon
