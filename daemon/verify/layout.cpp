// The code-layout check: culprit and parent rebuilt with forced alignment, measured until the shift reads as
// staying or vanishing.
#include "base/strings.hpp"
#include "bisect/confirm_pairs.hpp"
#include "bisect/stats.hpp"
#include "bisect/verify_stats.hpp"
#include "daemon/verify/steps.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace bisectd::daemon::verify {

namespace {

constexpr int k_min_layout_runs = 3; // per visit; two visits per commit → at least 6 runs each side
// Visits of each aligned build: two before the sequential test may stop, one more a side while it cannot.
constexpr int k_layout_min_visits = 2;
constexpr int k_layout_max_visits = 4;


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
