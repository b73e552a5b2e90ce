#include "daemon/watch/confirmation.hpp"

#include "base/strings.hpp"
#include "daemon/core/requests.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bisectd::daemon::watch {

namespace {

constexpr double k_inconclusive_p = 0.2;       // above this the data show no shift: reject at once
constexpr std::size_t k_max_confirm_runs = 40; // per side; past this an unconfirmed shift is rejected
constexpr int k_first_round_cap = 20;          // per side in the first round, whatever the noise model asks

} // namespace

Result<bool> Confirmation::confirming(const std::string& tree, const std::string& branch, const std::string& job) {
  for (auto state : {storage::DetectionState::confirming, storage::DetectionState::measuring_base}) {
    BISECTD_TRY_ASSIGN(auto rows, m_stores.detections.detections_in_state(state));
    if (std::any_of(rows.begin(), rows.end(), [&](const storage::DetectionRow& d) {
          return d.tree == tree && d.branch == branch && d.job == job;
        })) {
      return true;
    }
  }
  return false;
}

Status Confirmation::start(const storage::DetectionRow& proposal, const Job& job) {
  auto d = proposal;
  BISECTD_TRY_ASSIGN(d.id, m_stores.detections.add_detection(d));
  BISECTD_TRY_ASSIGN(int runs, enqueue_round(d, job, first_round_runs(d, job)));
  spdlog::info("detection {}: {}..{} {} {}: confirming with {} interleaved runs per side", d.id,
               base::short_sha(d.good), base::short_sha(d.bad), d.metric, base::signed_percent(d.change), runs);
  return {};
}

// As many runs as the series' noise asks for a shift of this size, within [min_runs, the first-round cap].
int Confirmation::first_round_runs(const storage::DetectionRow& d, const Job& job) {
  int per_side = std::max(m_min_runs, 5);
  auto series = m_series.load(d.tree, job, d.bad, {d.metric});
  if (!series || !series->metrics.contains(d.metric)) {
    return per_side;
  }
  auto noise = bisect::estimate_noise(series->metrics.at(d.metric));
  int needed = noise.confirm_runs_for(std::max(job.metrics.threshold, std::abs(d.change)));
  if (needed > per_side) {
    spdlog::info("detection {}: run noise {:.2g}% asks for {} runs per side", d.id, 100.0 * noise.run_sigma, needed);
  }
  return std::clamp(needed, per_side, std::max(per_side, k_first_round_cap));
}

// Interleaved on one machine, so lab drift hits both sides alike.
Result<int> Confirmation::enqueue_round(const storage::DetectionRow& d, const Job& job, int per_side) {
  auto pin = m_lab.first_in(job.machine_group);
  int visits = (per_side + job.runs - 1) / job.runs;
  for (int i = 0; i < visits; ++i) {
    for (const auto& commit : {d.good, d.bad}) {
      auto r = make_request(job, d.tree, commit, storage::Purpose::confirm, job.runs);
      r.detection_id = d.id;
      r.pin_machine = pin;
      BISECTD_TRY(m_stores.queue.enqueue(r));
    }
  }
  return visits * job.runs;
}

void Confirmation::advance() {
  for (auto state : {storage::DetectionState::confirming, storage::DetectionState::measuring_base}) {
    auto deciding = m_stores.detections.detections_in_state(state);
    for (const auto& detection : deciding.value_or(std::vector<storage::DetectionRow>{})) {
      auto status = advance_detection(detection);
      auto& logged = m_failing[detection.id];
      if (!status && logged != status.error().message) { // logged once per distinct error, not every tick
        logged = status.error().message;
        spdlog::error("detection {}: {} (logged again only when it changes)", detection.id, logged);
      } else if (status) {
        m_failing.erase(detection.id);
      }
    }
  }
}

Status Confirmation::advance_detection(const storage::DetectionRow& d) {
  BISECTD_TRY_ASSIGN(auto job, m_jobs.get(d.job));
  if (d.state == storage::DetectionState::measuring_base) {
    return advance_new_history(d, *job);
  }
  BISECTD_TRY_ASSIGN(auto requests, m_stores.queue.requests_for_detection(d.id));
  std::vector<std::int64_t> good_ids, bad_ids;
  for (const auto& r : requests) {
    if (r.is_open()) {
      return {};
    }
    (r.commit == d.good ? good_ids : bad_ids).push_back(r.id);
  }
  auto metric = d.metric.empty() ? job->metrics.primary : d.metric;
  BISECTD_TRY_ASSIGN(auto before, metric_values(m_stores.samples, job->name, metric, good_ids, d.good));
  BISECTD_TRY_ASSIGN(auto after, metric_values(m_stores.samples, job->name, metric, bad_ids, d.bad));
  auto test = bisect::confirm_shift(before, after, job->metrics.threshold);
  // Inconclusive (the shift is there in size but the noise hides it): measure more, up to a cap, like
  // Pinpoint's doubling of attempts.
  bool inconclusive =
    !test.confirmed && std::abs(test.relative_change) >= job->metrics.threshold && test.p_value < k_inconclusive_p;
  if (inconclusive && before.size() < k_max_confirm_runs) {
    BISECTD_TRY_ASSIGN(int runs, enqueue_round(d, *job, static_cast<int>(before.size())));
    spdlog::info("detection {}: {} with p={:.3g} after {} runs per side: inconclusive, {} more each", d.id,
                 base::signed_percent(test.relative_change), test.p_value, before.size(), runs);
    return {};
  }
  auto decided = d;
  decided.change = test.relative_change; // the interleaved runs measured the shift better than the first comparison
  decided.p_value = test.p_value;
  if (!test.confirmed) {
    spdlog::info("detection {}: {}..{} not confirmed ({}, p={:.3g}): no bisection", d.id, base::short_sha(d.good),
                 base::short_sha(d.bad), base::signed_percent(test.relative_change), test.p_value);
    // The row says what the reruns measured; the first comparison's shift goes to the note.
    decided.state = storage::DetectionState::rejected;
    decided.note = "the head's first runs said " + base::signed_percent(d.change);
    BISECTD_TRY(m_stores.detections.update_detection(decided));
    return release_head(decided);
  }
  // Asked again rather than read from the row: a detection a bisectd before migration 11 stored has no flag.
  BISECTD_TRY_ASSIGN(decided.rewritten, m_new_history.crosses_rewrite(d));
  spdlog::info("detection {}: {}..{} confirmed ({}, p={:.3g}){}", d.id, base::short_sha(d.good), base::short_sha(d.bad),
               base::signed_percent(test.relative_change), test.p_value,
               decided.rewritten ? " across a rewritten history" : ": bisecting");
  if (decided.rewritten) {
    BISECTD_TRY_ASSIGN(auto step, m_new_history.locate(decided, *job));
    decided.state = step.state;
    decided.base = step.base;
    decided.note = step.note;
    BISECTD_TRY(m_stores.detections.update_detection(decided));
    return decided.state == storage::DetectionState::failed ? release_head(decided)
                                                            : advance_new_history(decided, *job);
  }
  auto runs = std::min(before.size(), after.size());
  return open_bisection(decided, d.good,
                        "opened by detection " + std::to_string(d.id) + ": " + d.metric + " " +
                          base::signed_percent(test.relative_change) + " confirmed by " + std::to_string(runs) +
                          " interleaved runs per side (p=" + std::to_string(test.p_value) + ")",
                        "");
}

Status Confirmation::advance_new_history(storage::DetectionRow d, const Job& job) {
  BISECTD_TRY_ASSIGN(auto step, m_new_history.advance(d, job));
  if (step.state == storage::DetectionState::measuring_base) {
    return {};
  }
  d.base = step.base;
  d.note = step.note;
  d.request_id = step.request_id;
  if (step.state == storage::DetectionState::confirmed) {
    spdlog::info("detection {}: {}", d.id, step.note);
    return open_bisection(d, step.base,
                          "opened by detection " + std::to_string(d.id) + ": " + d.metric + " " +
                            base::signed_percent(d.change) + " confirmed across the rewrite of " + d.branch + "; " +
                            step.note,
                          step.note);
  }
  spdlog::info("detection {}: {}", d.id, step.note);
  d.state = step.state;
  BISECTD_TRY(m_stores.detections.update_detection(d));
  return release_head(d);
}

Status Confirmation::release_head(const storage::DetectionRow& d) {
  BISECTD_TRY_ASSIGN(auto head, m_stores.trees.head(d.tree, d.branch));
  if (head && head->tested == d.good) {
    return m_stores.trees.set_head_tested(d.tree, d.branch, d.bad);
  }
  return {};
}

Status Confirmation::open_bisection(storage::DetectionRow d, const std::string& good, const std::string& event,
                                    const std::string& note) {
  // A crash after start() but before the state below is stored must not open a second bisection.
  std::int64_t id = 0;
  BISECTD_TRY_ASSIGN(auto existing, m_stores.bisections.bisections(d.tree));
  for (const auto& b : existing) {
    if (b.origin == storage::Origin::detect && b.job == d.job && b.good == good && b.bad == d.bad) {
      id = b.id;
    }
  }
  d.note = note;
  if (id == 0) {
    auto started = m_bisections.start({d.tree, d.branch, good, d.bad, d.job, d.metric, storage::Origin::detect});
    if (!started) {
      // Decided for good: a start that fails now fails again on every tick (the error loop of a rewritten branch).
      spdlog::warn("detection {}: no bisection: {}", d.id, started.error().message);
      d.state = storage::DetectionState::failed;
      d.note = "confirmed, but no bisection could be opened: " + started.error().message;
      BISECTD_TRY(m_stores.detections.update_detection(d));
      return release_head(d);
    }
    id = *started;
    (void)m_stores.bisections.add_event(id, event);
  }
  d.state = storage::DetectionState::confirmed;
  d.bisection_id = id;
  BISECTD_TRY(m_stores.detections.update_detection(d));
  return release_head(d);
}

} // namespace bisectd::daemon::watch
