// The revert check: the culprit reverted on the bad head, measured until it reads at one of the two levels.
#include "base/strings.hpp"
#include "bisect/revert_test.hpp"
#include "bisect/stats.hpp"
#include "bisect/verify_stats.hpp"
#include "daemon/verify/steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace bisectd::daemon::verify {

namespace {

// Visits of the reverted head: boots differ (a QEMU boot here moves the level by 10-20 %), so several short visits
// beat one long one. Two before the sequential test may stop, one more at a time while it cannot, six at most.
constexpr int k_revert_min_visits = 2;
constexpr int k_revert_max_visits = 6;

nlohmann::json json_number(double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); }

// The revert requests' variant names the culprit, so a later culprit of the same bisection gets its own.
std::string revert_variant(const std::string& culprit) { return "revert:" + culprit; }

int revert_visit_runs(const Job& job) { return std::max(2, (job.runs + 1) / 2); }

std::string recovered_text(const bisect::Recovery& r) {
  if (std::isnan(r.fraction)) {
    return "none measurable";
  }
  return std::isnan(r.half_width) ? fmt::format("{:.0f}%", 100 * r.fraction)
                                  : fmt::format("{:.0f}% ± {:.0f}%", 100 * r.fraction, 100 * r.half_width);
}

std::string verdict_text(bisect::RevertVerdict verdict) {
  switch (verdict) {
  case bisect::RevertVerdict::comes_back: return "performance comes back";
  case bisect::RevertVerdict::partly: return "performance comes back partly";
  case bisect::RevertVerdict::does_not_come_back: return "performance does not come back";
  case bisect::RevertVerdict::too_noisy: return "cannot tell, the runs are too noisy";
  case bisect::RevertVerdict::unknown: break;
  }
  return "cannot tell";
}

Status enqueue_revert_visits(VerifyTarget& t, const std::string& reverted, int visits) {
  for (int visit = 0; visit < visits; ++visit) {
    BISECTD_TRY(enqueue_verify(t, reverted, revert_variant(t.culprit), revert_visit_runs(t.job)));
  }
  return {};
}

// Creates the revert commit and queues its first visits, or records why it cannot be made.
Result<StepState> start_revert(VerifyTarget& t, Verification& v) {
  Result<std::string> reverted = make_error(ErrorCode::generic, "not run");
  BISECTD_TRY(t.deps.repos.with_repo(t.b.tree, [&](vcs::Repo& repo) -> Status {
    reverted = repo.revert_onto(t.culprit, t.b.bad);
    return {};
  }));
  if (!reverted) {
    auto line = std::string("revert: ") +
                (reverted.error().code == ErrorCode::conflict ? "does not apply cleanly (" : "could not be made (") +
                reverted.error().message + ")";
    record_step(v, "revert", line, {{"applies", false}});
    return StepState::done;
  }
  BISECTD_TRY(enqueue_revert_visits(t, *reverted, k_revert_min_visits));
  return StepState::pending;
}

// What the reverted head is judged against: the parent's and the culprit's runs. The confirm pairs' when both sides
// have at least two: they are interleaved and were taken just before, in the verification's time window like the
// revert's runs (a QEMU lab here read 30 % lower ten minutes later); otherwise all their runs.
struct RevertLevels {
  std::vector<double> parent, culprit;
  double shift = NAN; // the culprit's relative change from its medians
  double sigma = 0;   // run sigma of log values: the job's prior, or the runs' spread when larger
};

Result<RevertLevels> revert_levels(VerifyTarget& t) {
  RevertLevels l;
  BISECTD_TRY_ASSIGN(l.parent, metric_values(t, t.suspect.parent, "", true));
  BISECTD_TRY_ASSIGN(l.culprit, metric_values(t, t.suspect.culprit, "", true));
  if (l.parent.size() < 2 || l.culprit.size() < 2) {
    BISECTD_TRY_ASSIGN(l.parent, metric_values(t, t.suspect.parent, ""));
    BISECTD_TRY_ASSIGN(l.culprit, metric_values(t, t.suspect.culprit, ""));
  }
  if (l.parent.empty() || l.culprit.empty()) {
    return l;
  }
  double p = bisect::median(l.parent), c = bisect::median(l.culprit);
  l.shift = (c - p) / p;
  l.sigma = run_sigma(t.job, {&l.parent, &l.culprit});
  return l;
}

bisect::RevertTest revert_test(const VerifyTarget& t, const RevertLevels& l) {
  bisect::RevertTest test;
  test.sigma = l.sigma;
  test.before = std::log(bisect::median(l.parent));
  test.after = std::log(bisect::median(l.culprit));
  test.alpha = t.job.bisect.delta;
  test.min_runs = k_revert_min_visits * revert_visit_runs(t.job);
  test.max_runs = k_revert_max_visits * revert_visit_runs(t.job);
  return test;
}

std::string stop_text(const bisect::RevertState& s) {
  switch (s.decision) {
  case bisect::RevertDecision::comes_back:
  case bisect::RevertDecision::does_not_come_back:
    return fmt::format("stopped at log LR {:.1f}, bound ±{:.1f}", s.log_lr, s.bound);
  case bisect::RevertDecision::at_maximum:
  case bisect::RevertDecision::more: break;
  }
  return fmt::format("the most it runs; log LR {:.1f} within ±{:.1f}", s.log_lr, s.bound);
}

} // namespace

// The reverted head is measured in visits until a sequential test between the parent's and the culprit's levels
// (bisect::decide_revert) is sure at the job's delta, or six visits are spent; the verdict is then the recovered
// share of the change with its interval.
Result<StepState> check_revert(VerifyTarget& t, Verification& v) {
  if (!t.job.verify.revert) {
    return StepState::done;
  }
  std::vector<storage::RequestRow> requests;
  for (const auto& r : t.requests) {
    if (r.variant == revert_variant(t.culprit)) {
      requests.push_back(r);
    }
  }
  if (requests.empty()) {
    return start_revert(t, v);
  }
  if (any_open(requests)) {
    return StepState::pending;
  }
  const auto& reverted = requests.front().commit;
  BISECTD_TRY_ASSIGN(auto revert, metric_values(t, {reverted}, revert_variant(t.culprit)));
  BISECTD_TRY_ASSIGN(auto levels, revert_levels(t));
  if (revert.empty() || levels.parent.empty() || levels.culprit.empty()) {
    auto line = "revert: the reverted head " + base::short_sha(reverted) + " could not be measured (" +
                failure_text(requests) + ")";
    record_step(v, "revert", line, {{"applies", true}, {"commit", reverted}});
    return StepState::done;
  }
  auto state = bisect::decide_revert(bisect::log_values(revert), revert_test(t, levels));
  auto visits = static_cast<int>(requests.size());
  if (state.decision == bisect::RevertDecision::more && visits < k_revert_max_visits) {
    (void)t.deps.events.add_event(t.b.id, fmt::format("revert: {} runs of the reverted head, not yet sure (log LR "
                                                      "{:.1f} within ±{:.1f}): visit {} of at most {}",
                                                      revert.size(), state.log_lr, state.bound, visits + 1,
                                                      k_revert_max_visits));
    BISECTD_TRY(enqueue_revert_visits(t, reverted, 1));
    return StepState::pending;
  }
  double r = bisect::median(revert), c = bisect::median(levels.culprit);
  auto recovery = bisect::revert_recovery(levels.culprit, revert, levels.shift);
  auto verdict = bisect::revert_verdict(recovery);
  // Labelled as what it measures (reverted head vs the culprit, medians): not a second "shift" of the culprit.
  auto line = fmt::format("revert: the reverted head {} reads {} vs the culprit (medians of {} runs and of the "
                          "culprit's {}; {} of the culprit's change recovered; {}): {}",
                          base::short_sha(reverted), base::signed_percent((r - c) / c), revert.size(),
                          levels.culprit.size(), recovered_text(recovery), stop_text(state), verdict_text(verdict));
  record_step(v, "revert", line,
              {{"applies", true},
               {"commit", reverted},
               {"runs", revert.size()},
               {"median", r},
               {"culprit_runs", levels.culprit.size()},
               {"culprit_median", c},
               {"shift", json_number(levels.shift)},
               {"log_lr", state.log_lr},
               {"recovered", json_number(recovery.fraction)},
               {"recovered_half_width", json_number(recovery.half_width)}});
  return StepState::done;
}

double run_sigma(const Job& job, std::initializer_list<const std::vector<double>*> sides) {
  std::vector<double> spread;
  for (const auto* side : sides) {
    auto logs = bisect::log_values(*side);
    double m = bisect::median(logs);
    for (double y : logs) {
      spread.push_back(y - m);
    }
  }
  double prior = job.bisect.noise ? std::log1p(*job.bisect.noise) : 0.0;
  return std::max(prior, spread.size() >= 4 ? bisect::robust_sigma(spread) : 0.0);
}

} // namespace bisectd::daemon::verify
