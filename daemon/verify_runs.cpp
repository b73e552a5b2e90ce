// The verification steps that need runs: the revert test and the code-layout test.
#include "daemon/verify_checks.hpp"
#include "daemon/verify_steps.hpp"

#include "base/strings.hpp"

#include <fmt/format.h>

#include <cmath>

namespace bisectd::daemon {

namespace {

constexpr int k_min_layout_runs = 3; // per visit; two visits per commit → at least 6 runs each side

// The revert request's variant names the culprit, so a later culprit of the same bisection gets its own.
std::string revert_variant(const std::string& culprit) { return "revert:" + culprit; }

std::string revert_verdict(double recovered) {
  if (std::isnan(recovered)) {
    return "cannot tell";
  }
  return recovered >= 0.7 ? "performance comes back"
         : recovered >= 0.3 ? "performance comes back partly"
                             : "performance does not come back";
}

// Creates the revert commit and queues its measurement, or records why it cannot be made.
Result<StepState> start_revert(VerifyTarget& t, Verification& v) {
  Result<std::string> reverted = make_error(ErrorCode::generic, "not run");
  BISECTD_TRY(t.context.trees->with_repo(t.b.tree, [&](vcs::Repository& repo) -> Status {
    reverted = repo.revert_onto(t.culprit, t.b.bad);
    return {};
  }));
  if (!reverted) {
    auto line = std::string("revert: ") + (reverted.error().code == ErrorCode::conflict
                                               ? "does not apply cleanly ("
                                               : "could not be made (") +
                reverted.error().message + ")";
    v.lines.push_back(line);
    v.details["revert"] = {{"result", line}, {"applies", false}};
    return StepState::done;
  }
  BISECTD_TRY(enqueue_verify(t, *reverted, revert_variant(t.culprit), std::max(5, 2 * t.job.runs)));
  return StepState::pending;
}

} // namespace

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
  BISECTD_TRY_ASSIGN(auto revert, metric_values(t, reverted, revert_variant(t.culprit)));
  BISECTD_TRY_ASSIGN(auto bad, metric_values(t, t.b.bad, ""));
  BISECTD_TRY_ASSIGN(auto good, metric_values(t, t.b.good, ""));
  if (good.empty()) {
    BISECTD_TRY_ASSIGN(good, metric_values(t, t.parent, ""));
  }
  if (revert.empty()) {
    auto line = "revert: the reverted head " + base::short_sha(reverted) + " could not be measured (" +
                failure_text(requests) + ")";
    v.lines.push_back(line);
    v.details["revert"] = {{"result", line}, {"applies", true}, {"commit", reverted}};
    return StepState::done;
  }
  double r = median_of(revert), g = median_of(good), b = median_of(bad);
  double recovered = recovered_fraction(good, bad, revert);
  auto line = fmt::format("revert: {} runs on the reverted head {}: {} vs good, {} vs bad ({})", revert.size(),
                          base::short_sha(reverted), percent(g == 0 ? NAN : (r - g) / std::abs(g)),
                          percent(b == 0 ? NAN : (r - b) / std::abs(b)), revert_verdict(recovered));
  v.lines.push_back(line);
  v.details["revert"] = {{"result", line},      {"applies", true},   {"commit", reverted},
                         {"runs", revert.size()}, {"median", r},     {"good_median", g},
                         {"bad_median", b},     {"recovered", std::isnan(recovered) ? nlohmann::json() : nlohmann::json(recovered)}};
  return StepState::done;
}

Result<StepState> check_layout(VerifyTarget& t, Verification& v) {
  bool kernel = t.job.build.kind == kbuild::RecipeKind::kernel;
  if (!t.job.verify.layout || (!kernel && t.job.verify.layout_env.empty())) {
    return StepState::done;
  }
  auto parent_requests = requests_for(t, t.parent, "layout");
  auto culprit_requests = requests_for(t, t.culprit, "layout");
  if (parent_requests.empty() || culprit_requests.empty()) {
    int runs = std::max(k_min_layout_runs, t.job.runs);
    for (int visit = 0; visit < 2; ++visit) { // interleaved: parent, culprit, parent, culprit
      if (parent_requests.empty()) {
        BISECTD_TRY(enqueue_verify(t, t.parent, "layout", runs));
      }
      if (culprit_requests.empty()) {
        BISECTD_TRY(enqueue_verify(t, t.culprit, "layout", runs));
      }
    }
    return StepState::pending;
  }
  if (any_open(parent_requests) || any_open(culprit_requests)) {
    return StepState::pending;
  }
  BISECTD_TRY_ASSIGN(auto parent_layout, metric_values(t, t.parent, "layout"));
  BISECTD_TRY_ASSIGN(auto culprit_layout, metric_values(t, t.culprit, "layout"));
  auto what = kernel ? std::string("with forced 64-byte function alignment") : std::string("with the layout switch");
  if (parent_layout.size() < 3 || culprit_layout.size() < 3) {
    auto line = "layout: could not measure " + what + " (" +
                failure_text(parent_layout.size() < 3 ? parent_requests : culprit_requests) + ")";
    v.lines.push_back(line);
    v.details["layout"] = {{"result", line}, {"artefact", false}};
    return StepState::done;
  }
  BISECTD_TRY_ASSIGN(auto parent_normal, metric_values(t, t.parent, ""));
  BISECTD_TRY_ASSIGN(auto culprit_normal, metric_values(t, t.culprit, ""));
  auto normal = bisect::confirm_shift(parent_normal, culprit_normal, t.job.metrics.threshold);
  auto variant = bisect::confirm_shift(parent_layout, culprit_layout, t.job.metrics.threshold);
  v.layout_artefact = shift_vanished(normal, variant);
  auto line = fmt::format("layout: {} the shift is {} (was {}){}", what, percent(variant.relative_change),
                          percent(normal.relative_change),
                          v.layout_artefact ? ": likely a code-layout artefact" : ": the shift stays");
  if (v.layout_artefact) {
    v.lines.insert(v.lines.begin(), line); // prominent: first
  } else {
    v.lines.push_back(line);
  }
  v.details["layout"] = {{"result", line},
                         {"artefact", v.layout_artefact},
                         {"change", normal.relative_change},
                         {"layout_change", variant.relative_change},
                         {"layout_p_value", variant.p_value},
                         {"layout_confirmed", variant.confirmed},
                         {"runs", {{"parent", parent_layout.size()}, {"culprit", culprit_layout.size()}}}};
  return StepState::done;
}

} // namespace bisectd::daemon
