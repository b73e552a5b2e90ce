#include "daemon/verify/verifier.hpp"

#include "base/strings.hpp"
#include "bisect/confirm_pairs.hpp"
#include "bisect/verify_stats.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/verify/steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace bisectd::daemon::verify {

Result<std::vector<double>> metric_values(VerifyTarget& t, const std::vector<std::string>& commits,
                                          const std::string& variant, bool verification_only) {
  BISECTD_TRY_ASSIGN(auto samples, t.deps.samples.metric_samples(t.job.name, commits, t.b.metric, variant));
  std::vector<double> values;
  for (const auto& s : samples) {
    if ((verification_only && !s.verification) || !(s.value > 0)) {
      continue;
    }
    values.push_back(s.value);
  }
  return values;
}

std::vector<storage::RequestRow> requests_for(const VerifyTarget& t, const std::string& commit,
                                              const std::string& variant) {
  std::vector<storage::RequestRow> out;
  for (const auto& r : t.requests) {
    if (r.commit == commit && r.variant == variant) {
      out.push_back(r);
    }
  }
  return out;
}

bool any_open(const std::vector<storage::RequestRow>& requests) {
  return std::any_of(requests.begin(), requests.end(), [](const auto& r) { return r.is_open(); });
}

std::string failure_text(const std::vector<storage::RequestRow>& requests) {
  for (auto r = requests.rbegin(); r != requests.rend(); ++r) {
    if (r->state == storage::RequestState::failed) {
      return (r->error_code.empty() ? "failed" : r->error_code) + ": " + r->error;
    }
  }
  return "no samples";
}

Status enqueue_verify(VerifyTarget& t, const std::string& commit, const std::string& variant, int runs) {
  auto r = make_request(t.job, t.b.tree, commit, storage::Purpose::verify, runs);
  r.bisection_id = t.b.id;
  r.variant = variant;
  BISECTD_TRY_ASSIGN(r.id, t.deps.queue.enqueue(r));
  t.requests.push_back(r); // later steps of this tick see it (no double queueing)
  (void)t.deps.events.add_event(t.b.id, "verify " + base::short_sha(commit) + " x" + std::to_string(runs) + " (" +
                                          variant + ")");
  return {};
}

void record_step(Verification& v, const std::string& step, const std::string& line, nlohmann::json numbers,
                 bool first) {
  v.lines.insert(first ? v.lines.begin() : v.lines.end(), line);
  v.details[step] = line;
  v.details["numbers"][step] = std::move(numbers);
}

Result<StepState> summarise_confirm(VerifyTarget& t, Verification& v) {
  if (!t.job.verify.confirm) {
    return StepState::done;
  }
  BISECTD_TRY_ASSIGN(auto parent, metric_values(t, t.suspect.parent, "", true));
  BISECTD_TRY_ASSIGN(auto culprit, metric_values(t, t.suspect.culprit, "", true));
  auto change = bisect::mean_change(parent, culprit);
  auto test = bisect::confirm_shift(parent, culprit, t.job.metrics.threshold);
  auto pairs = std::min(parent.size(), culprit.size());
  // The engine takes pairs until its sequential test (bisect/confirm_pairs.hpp) is sure at the job's delta or the
  // job's maximum is reached: fewer pairs than the maximum mean the test stopped early, on a shift that holds. At the
  // maximum the rank test of the pairs judges.
  bool stopped_early = pairs >= static_cast<std::size_t>(bisect::k_min_confirm_pairs) &&
                       pairs < static_cast<std::size_t>(std::max(0, t.job.verify.pairs));
  bool holds = stopped_early || test.confirmed;
  auto why = stopped_early ? fmt::format("the shift holds: the sequential test stopped after {} of at most {} pairs",
                                         pairs, t.job.verify.pairs)
                           : std::string(holds ? "the shift holds" : "the shift does not hold");
  std::string line = pairs == 0 ? std::string("confirm: no interleaved culprit/parent pairs were measured")
                                : fmt::format("confirm: {} interleaved culprit/parent pairs differ by {} ± {:.1f}% "
                                              "(paired runs, drift cancelled; {})",
                                              pairs, base::signed_percent(change.change), 100 * change.half_width, why);
  record_step(v, "confirm", line,
              {{"pairs", pairs},
               {"change", std::isnan(change.change) ? nlohmann::json() : nlohmann::json(change.change)},
               {"ci95", std::isnan(change.half_width) ? nlohmann::json() : nlohmann::json(change.half_width)},
               {"p_value", test.p_value},
               {"stopped_early", stopped_early},
               {"confirmed", holds}});
  return StepState::done;
}

// Verifies the suspect: plausibility first (it needs no runs and may end the verification), then the confirm
// summary, the revert and the layout check (queued together, so their runs overlap).
Result<std::optional<Verification>> CulpritVerifier::verify(const storage::BisectionRow& b, const Job& job,
                                                            const Suspect& suspect) {
  if (suspect.culprit.empty() || suspect.parent.empty()) {
    return make_error(ErrorCode::invalid_input, "verify: the culprit and its parent must both be named");
  }
  BISECTD_TRY_ASSIGN(auto requests, m_deps.queue.requests_for_bisection(b.id));
  VerifyTarget t{m_deps, b, job, suspect, std::move(requests)};
  Verification v;
  v.details["culprit"] = t.culprit;
  BISECTD_TRY_ASSIGN(auto plausible_state, check_plausibility(t, v));
  (void)plausible_state;
  if (v.implausible) {
    return std::optional<Verification>(std::move(v));
  }
  BISECTD_TRY(summarise_confirm(t, v));
  BISECTD_TRY_ASSIGN(auto revert, check_revert(t, v));
  BISECTD_TRY_ASSIGN(auto layout, check_layout(t, v));
  if (revert == StepState::pending || layout == StepState::pending) {
    return std::optional<Verification>();
  }
  v.details["layout_artefact"] = v.layout_artefact;
  return std::optional<Verification>(std::move(v));
}

} // namespace bisectd::daemon::verify
