// The verification steps that need runs: the revert test and the code-layout test.
#include "base/strings.hpp"
#include "bisect/stats.hpp"
#include "bisect/verify_stats.hpp"
#include "daemon/verify/steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace bisectd::daemon::verify {

namespace {

constexpr int k_min_layout_runs = 3; // per visit; two visits per commit → at least 6 runs each side

// Per side, alternated (reverted head, bad head, ...). Boots differ (a QEMU boot here moves the level by 10-20 %),
// so several shorter visits beat two long ones.
constexpr int k_revert_visits = 4;
// Rounds of k_revert_visits while the recovery is too noisy to judge (the last one is judged as it stands).
constexpr int k_max_revert_rounds = 3;

nlohmann::json json_number(double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); }

// The revert requests' variants name the culprit, so a later culprit of the same bisection gets its own. The
// bad head is measured again under its own label in the same window: lab levels drift (a QEMU lab here read
// 30 % lower ten minutes later), so the reverted head is only compared with runs taken alongside it.
std::string revert_variant(const std::string& culprit) { return "revert:" + culprit; }
std::string revert_reference_variant(const std::string& culprit) { return "revert-ref:" + culprit; }

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

// One round of revert visits: the reverted head and the bad head alternated.
Status enqueue_revert_round(VerifyTarget& t, const std::string& reverted) {
  int runs = std::max(2, (t.job.runs + 1) / 2);
  for (int visit = 0; visit < k_revert_visits; ++visit) {
    BISECTD_TRY(enqueue_verify(t, reverted, revert_variant(t.culprit), runs));
    BISECTD_TRY(enqueue_verify(t, t.b.bad, revert_reference_variant(t.culprit), runs));
  }
  return {};
}

// Creates the revert commit and queues its measurement interleaved with the bad head's, or records why it
// cannot be made.
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
  BISECTD_TRY(enqueue_revert_round(t, *reverted));
  return StepState::pending;
}

// The culprit's shift that the revert is measured against (NaN when unknown): from the confirm pairs when there
// are at least two, because they are interleaved and taken in the verification's time window, like the revert's
// runs (a lab's level drifts, and a fixed extra cost per operation is a different share of a different level);
// otherwise from all the culprit's and parent's runs.
double culprit_shift(VerifyTarget& t) {
  auto shift_of = [&](bool verification_only, std::size_t min_runs) -> double {
    auto parent = metric_values(t, t.suspect.parent, "", verification_only);
    auto culprit = metric_values(t, t.suspect.culprit, "", verification_only);
    if (!parent || !culprit || parent->size() < min_runs || culprit->size() < min_runs) {
      return NAN;
    }
    double p = bisect::median(*parent), c = bisect::median(*culprit);
    return p > 0 ? (c - p) / p : NAN;
  };
  double paired = shift_of(true, 2);
  return std::isnan(paired) ? shift_of(false, 1) : paired;
}

} // namespace

Result<StepState> check_revert(VerifyTarget& t, Verification& v) {
  if (!t.job.verify.revert) {
    return StepState::done;
  }
  std::vector<storage::RequestRow> requests;
  for (const auto& r : t.requests) {
    if (r.variant == revert_variant(t.culprit) || r.variant == revert_reference_variant(t.culprit)) {
      requests.push_back(r);
    }
  }
  if (requests.empty()) {
    return start_revert(t, v);
  }
  if (any_open(requests)) {
    return StepState::pending;
  }
  auto reverted_at = std::find_if(requests.begin(), requests.end(),
                                  [&](const auto& r) { return r.variant == revert_variant(t.culprit); });
  const auto& reverted = reverted_at != requests.end() ? reverted_at->commit : requests.front().commit;
  BISECTD_TRY_ASSIGN(auto revert, metric_values(t, {reverted}, revert_variant(t.culprit)));
  BISECTD_TRY_ASSIGN(auto bad, metric_values(t, {t.b.bad}, revert_reference_variant(t.culprit)));
  if (revert.empty() || bad.empty()) {
    auto line = "revert: the reverted head " + base::short_sha(reverted) + " could not be measured alongside the " +
                "bad head (" + failure_text(requests) + ")";
    record_step(v, "revert", line, {{"applies", true}, {"commit", reverted}});
    return StepState::done;
  }
  double r = bisect::median(revert), b = bisect::median(bad), shift = culprit_shift(t);
  auto recovery = bisect::revert_recovery(bad, revert, shift);
  auto verdict = bisect::revert_verdict(recovery);
  auto rounds = static_cast<int>(requests.size()) / (2 * k_revert_visits);
  if (verdict == bisect::RevertVerdict::too_noisy && rounds < k_max_revert_rounds) {
    (void)t.deps.events.add_event(t.b.id, fmt::format("revert: {} of the culprit's change recovered, too "
                                                      "noisy to judge: revert round {} of at most {}",
                                                      recovered_text(recovery), rounds + 1, k_max_revert_rounds));
    BISECTD_TRY(enqueue_revert_round(t, reverted));
    return StepState::pending;
  }
  // Labelled as what it measures (reverted head vs bad head, medians): not a second "shift" of the culprit.
  auto line = fmt::format("revert: the reverted head {} reads {} vs the bad head (medians of {} + {} interleaved "
                          "runs; {} of the culprit's change recovered): {}",
                          base::short_sha(reverted), base::signed_percent(b == 0 ? NAN : (r - b) / std::abs(b)),
                          revert.size(), bad.size(), recovered_text(recovery), verdict_text(verdict));
  record_step(v, "revert", line,
              {{"applies", true},
               {"commit", reverted},
               {"runs", revert.size()},
               {"median", r},
               {"bad_runs", bad.size()},
               {"bad_median", b},
               {"shift", json_number(shift)},
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

// Queues two visits per missing side, interleaved (parent, culprit, parent, culprit) so that slow drift of
// the machine hits both sides alike.
Status queue_layout_visits(VerifyTarget& t, const std::string& variant, bool parent, bool culprit) {
  int runs = std::max(k_min_layout_runs, t.job.runs);
  for (int visit = 0; visit < 2; ++visit) {
    if (parent) {
      BISECTD_TRY(enqueue_verify(t, t.parent, variant, runs));
    }
    if (culprit) {
      BISECTD_TRY(enqueue_verify(t, t.culprit, variant, runs));
    }
  }
  return {};
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
    BISECTD_TRY(queue_layout_visits(t, variant_name, parent_requests.empty(), culprit_requests.empty()));
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
