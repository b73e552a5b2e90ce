// The verification steps that need runs: the revert test and the code-layout test.
#include "base/strings.hpp"
#include "bisect/confirm_pairs.hpp"
#include "bisect/revert_test.hpp"
#include "bisect/stats.hpp"
#include "bisect/verify_stats.hpp"
#include "daemon/verify/steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace bisectd::daemon::verify {

namespace {

constexpr int k_min_layout_runs = 3; // per visit; two visits per commit → at least 6 runs each side
// Visits of each aligned build: two before the sequential test may stop, one more a side while it cannot.
constexpr int k_layout_min_visits = 2;
constexpr int k_layout_max_visits = 4;

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

// The run sigma of log values the sequential checks assume: the job's prior, or the runs' own spread when larger
// (each run's distance from its side's median, so that the change between the sides is left out; robust to wild
// runs). A sigma at least the true one keeps their error bounds.
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

namespace {

// "layout", or for a kernel whose "layout" build was refused for lack of the alignment option (invalid_config),
// the KCFLAGS fallback "layout-kcflags" (run::recipe_for).
std::string layout_variant(const VerifyTarget& t) {
  if (t.job.build.kind != kbuild::RecipeKind::kernel) {
    return "layout";
  }
  auto requests = requests_for(t, t.parent, "layout");
  auto culprit = requests_for(t, t.culprit, "layout");
  requests.insert(requests.end(), culprit.begin(), culprit.end());
  for (const auto& r : requests) {
    if (r.state == storage::RequestState::failed && r.error_code == "invalid_config" && !any_open(requests)) {
      return "layout-kcflags";
    }
  }
  return "layout";
}

// Queues `visits` visits per side asked for, interleaved (parent, culprit, parent, culprit) so that slow drift of
// the machine hits both sides alike.
Status queue_layout_visits(VerifyTarget& t, const std::string& variant, bool parent, bool culprit, int visits) {
  int runs = std::max(k_min_layout_runs, t.job.runs);
  for (int visit = 0; visit < visits; ++visit) {
    if (parent) {
      BISECTD_TRY(enqueue_verify(t, t.parent, variant, runs));
    }
    if (culprit) {
      BISECTD_TRY(enqueue_verify(t, t.culprit, variant, runs));
    }
  }
  return {};
}

// Whether the aligned builds' pairs already tell, at the job's delta, that the shift stays (it reads as built
// normally) or vanished (no shift): the confirm pairs' sequential test (bisect::decide_pairs, H1 the normal
// build's shift) read both ways. Undecided pairs get another visit a side, up to k_layout_max_visits.
bool layout_decided(const VerifyTarget& t, const bisect::ShiftTest& normal, const std::vector<double>& parent,
                    const std::vector<double>& culprit) {
  bisect::PairTest test;
  test.sigma = run_sigma(t.job, {&parent, &culprit});
  test.threshold = t.job.metrics.threshold;
  test.shift = normal.relative_change;
  test.alpha = t.job.bisect.delta;
  test.max_pairs = k_layout_max_visits * std::max(k_min_layout_runs, t.job.runs);
  auto v = bisect::decide_pairs(bisect::log_values(parent), bisect::log_values(culprit), test);
  return std::abs(v.log_lr) >= v.bound;
}

} // namespace

Result<StepState> check_layout(VerifyTarget& t, Verification& v) {
  bool kernel = t.job.build.kind == kbuild::RecipeKind::kernel;
  if (!t.job.verify.layout || (!kernel && t.job.verify.layout_env.empty())) {
    return StepState::done;
  }
  auto variant_name = layout_variant(t);
  auto parent_requests = requests_for(t, t.parent, variant_name);
  auto culprit_requests = requests_for(t, t.culprit, variant_name);
  if (parent_requests.empty() || culprit_requests.empty()) {
    BISECTD_TRY(queue_layout_visits(t, variant_name, parent_requests.empty(), culprit_requests.empty(),
                                    k_layout_min_visits));
    return StepState::pending;
  }
  if (any_open(parent_requests) || any_open(culprit_requests)) {
    return StepState::pending;
  }
  BISECTD_TRY_ASSIGN(auto parent_layout, metric_values(t, {t.parent}, variant_name));
  BISECTD_TRY_ASSIGN(auto culprit_layout, metric_values(t, {t.culprit}, variant_name));
  auto what = !kernel                    ? std::string("with the layout switch")
              : variant_name == "layout" ? std::string("with forced 64-byte function alignment")
                                         : std::string("with forced 64-byte function alignment (KCFLAGS)");
  if (parent_layout.size() < 3 || culprit_layout.size() < 3) {
    auto line = "layout: could not measure " + what + " (" +
                failure_text(parent_layout.size() < 3 ? parent_requests : culprit_requests) + ")";
    record_step(v, "layout", line, {{"artefact", false}, {"variant", variant_name}});
    return StepState::done;
  }
  BISECTD_TRY_ASSIGN(auto parent_normal, metric_values(t, t.suspect.parent, ""));
  BISECTD_TRY_ASSIGN(auto culprit_normal, metric_values(t, t.suspect.culprit, ""));
  auto normal = bisect::confirm_shift(parent_normal, culprit_normal, t.job.metrics.threshold);
  auto visits = static_cast<int>(std::min(parent_requests.size(), culprit_requests.size()));
  if (visits < k_layout_max_visits && !layout_decided(t, normal, parent_layout, culprit_layout)) {
    BISECTD_TRY(queue_layout_visits(t, variant_name, true, true, 1));
    return StepState::pending;
  }
  auto variant = bisect::confirm_shift(parent_layout, culprit_layout, t.job.metrics.threshold);
  v.layout_artefact = bisect::shift_vanished(normal, variant);
  auto line = fmt::format("layout: rebuilt {}, culprit vs parent differ by {} (built normally: {}, medians){}", what,
                          base::signed_percent(variant.relative_change), base::signed_percent(normal.relative_change),
                          v.layout_artefact ? ": likely a code-layout artefact" : ": the shift stays");
  record_step(v, "layout", line,
              {{"artefact", v.layout_artefact},
               {"variant", variant_name},
               {"change", normal.relative_change},
               {"layout_change", variant.relative_change},
               {"layout_p_value", variant.p_value},
               {"layout_confirmed", variant.confirmed},
               {"runs", {{"parent", parent_layout.size()}, {"culprit", culprit_layout.size()}}}},
              v.layout_artefact); // an artefact is the first line: the report's reader must see it
  return StepState::done;
}

} // namespace bisectd::daemon::verify
