// The end of a bisection (Driver::finish and its steps): a merge culprit sends the search into its branch, a found
// culprit is verified, and what the search concluded is stored once with its report mail.
#include "base/clock.hpp"
#include "base/strings.hpp"
#include "daemon/bisection/driver.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace bisectd::daemon::bisection {

namespace {

using nlohmann::json;
using storage::BisectionState;

BisectionState verdict_state(bisect::Verdict verdict) {
  return verdict == bisect::Verdict::found ? BisectionState::found : BisectionState::not_found;
}

} // namespace

Result<bool> Driver::recurse_into_merge(storage::BisectionRow& b, const std::string& culprit) {
  std::optional<std::pair<std::string, std::string>> range;
  BISECTD_TRY(m_parts.repos.with_repo(b.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(range, repo.merged_range(culprit));
    return {};
  }));
  if (!range) {
    return false;
  }
  b.merge = culprit;
  b.reused_earlier = b.runs_reused; // the branch's own chain hands the engine other samples
  b.range_good = range->first;
  b.range_bad = range->second;
  BISECTD_TRY(m_stores.bisections.update_bisection(b));
  (void)m_stores.bisections.add_event(b.id, "culprit " + base::short_sha(culprit) +
                                              " is a merge: searching the merged branch " +
                                              base::short_sha(b.range_good) + ".." + base::short_sha(b.range_bad));
  return true;
}

// Verifies the found culprit; an implausible one is excluded and the search goes on without it.
Result<Driver::Checked> Driver::check_culprit(Tick& t, std::optional<verify::Verification>& verification) {
  auto culprit = *t.step.culprit;
  verify::Suspect suspect{same_build(t.chain, t.problem.chain, culprit),
                          same_build(t.chain, t.problem.chain, reference_parent(t.problem.chain, culprit))};
  BISECTD_TRY_ASSIGN(verification, m_parts.verifier.verify(t.b, *t.job, suspect));
  if (!verification) {
    BISECTD_TRY(m_stores.bisections.update_bisection(t.b));
    return Checked::pending; // verification runs pending
  }
  t.b.verification_json = verification->details.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!verification->implausible) {
    return Checked::verified;
  }
  BISECTD_TRY(m_stores.bisections.exclude_commit(t.b.id, t.chain[culprit]));
  (void)m_stores.bisections.add_event(t.b.id, "culprit " + base::short_sha(t.chain[culprit]) + " is implausible (" +
                                                base::join(verification->lines, "; ") + "): searching on without it");
  BISECTD_TRY(m_stores.bisections.update_bisection(t.b));
  return Checked::excluded;
}

// What the bisection concluded, for the report; sets the row's state and culprit.
reporting::Conclusion Driver::conclude(Tick& t, const std::optional<verify::Verification>& verification) {
  reporting::Conclusion c;
  if (verification) {
    c.verification = verification->lines;
    c.layout_artefact = verification->layout_artefact;
  }
  c.chain = t.chain;
  c.culprit = t.step.culprit.value_or(t.chain.size() - 1);
  c.parent = c.culprit > 0 ? reference_parent(t.problem.chain, c.culprit) : 0;
  c.culprit_build = same_build(t.chain, t.problem.chain, c.culprit);
  c.parent_build = same_build(t.chain, t.problem.chain, std::min(c.parent, c.culprit));
  c.culprit_sha = t.chain[c.culprit];
  c.p_culprit = t.step.p_culprit;
  c.credible_set = t.step.credible_set;
  c.confident = t.step.verdict == bisect::Verdict::found;
  c.runs = static_cast<int>(t.b.runs);     // every run its requests caused, in every phase
  c.builds = static_cast<int>(t.b.builds); // prebuilt commits never measured included
  c.runs_reused = static_cast<int>(t.b.runs_reused);
  c.machine_seconds = t.b.machine_seconds;
  if (!t.b.merge.empty() && t.step.verdict == bisect::Verdict::no_change) {
    c.culprit_sha = t.b.merge; // the merged branch alone does not regress: the merge itself is the culprit
    c.confident = true;
    t.b.state = BisectionState::found;
  } else {
    t.b.state = verdict_state(t.step.verdict);
  }
  t.b.culprit = t.b.state == BisectionState::found ? c.culprit_sha : "";
  t.b.finished_at = base::unix_now();
  return c;
}

// The report's comparison in the result `show` reads: the culprit's real parent, the commit measured in its place
// and the shift between them, replacing the engine's estimate, so that `show` and the mail give one number.
void Driver::record_comparison(Tick& t, const reporting::Conclusion& c) {
  std::string first_parent;
  (void)m_parts.repos.with_repo(t.b.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(auto culprit, repo.commit(c.culprit_sha));
    first_parent = culprit.parents.empty() ? "" : culprit.parents.front();
    return {};
  });
  auto compared = reporting::compared_commits(c, first_parent);
  auto shift = reporting::compared_shift(m_stores.samples, t.b.job, t.b.metric, compared);
  auto result = json::parse(t.b.result_json, nullptr, false);
  if (!result.is_object()) {
    result = json::object();
  }
  result["compared"] = {{"culprit", compared.culprit},
                        {"parent", compared.parent},
                        {"same_binary_as", compared.same_binary ? json(compared.measured) : json(nullptr)}};
  if (shift && shift->known) {
    result["shift"] = {{"estimate", shift->estimate},
                       {"low", shift->low},
                       {"high", shift->high},
                       {"of", "culprit vs parent, mean of the runs"},
                       {"runs", {{"parent", shift->parent_runs}, {"culprit", shift->culprit_runs}}}};
  }
  t.b.result_json = result.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Stores the result and its report mail in one transaction (no mail for "no change" on the mainline; no second
// mail for a culprit already reported for the tree and job: the report answers the first one instead).
Status Driver::store_result(Tick& t, reporting::Conclusion c) {
  std::optional<storage::ReportRow> report;
  if (t.step.verdict != bisect::Verdict::no_change || !t.b.merge.empty()) {
    BISECTD_TRY_ASSIGN(auto tree, m_stores.trees.tree(t.b.tree));
    if (t.b.state == BisectionState::found) {
      BISECTD_TRY_ASSIGN(c.earlier_report, m_stores.bisections.first_report(t.b.tree, t.b.job, c.culprit_sha, t.b.id));
    }
    if (tree && !m_parts.reporter.prepare(t.b, *t.job, *tree, c)) {
      return {}; // the report's additions are being collected: this bisection finishes at a later tick
    }
    if (tree) {
      BISECTD_TRY_ASSIGN(report, m_parts.reporter.compose(t.b, *t.job, *tree, c));
    }
    record_comparison(t, c);
  }
  BISECTD_TRY(m_stores.bisections.finish_bisection(t.b, report));
  const auto& b = t.b;
  if (report && report->repeat_of != 0 && c.earlier_report) {
    (void)m_stores.bisections.add_event(b.id, "culprit already reported by bisection " +
                                                std::to_string(c.earlier_report->bisection_id) + " (" +
                                                c.earlier_report->message_id + "): no second mail");
  }
  (void)m_stores.bisections.add_event(b.id, "finished: " + std::string(to_string(b.state)) +
                                              (b.culprit.empty() ? "" : " culprit " + base::short_sha(b.culprit)) +
                                              " P=" + std::to_string(b.p_culprit).substr(0, 6));
  spdlog::info("bisection {} {}: {} (P={:.4f}, {} runs, {} builds)", b.id, to_string(b.state),
               b.culprit.empty() ? "-" : base::short_sha(b.culprit), b.p_culprit, b.runs, b.builds);
  return {};
}

// The search has an answer and no runs are in flight.
Status Driver::finish(Tick& t) {
  bool found = t.step.verdict == bisect::Verdict::found && t.step.culprit;
  // 1. A merge culprit: the change is in the merged branch (or the merge itself); search the branch.
  if (found) {
    BISECTD_TRY_ASSIGN(bool moved, recurse_into_merge(t.b, t.chain[*t.step.culprit]));
    if (moved) {
      return {};
    }
  }
  // 2. Verify the culprit before anyone is mailed; wait for its runs, or search on without an implausible one.
  std::optional<verify::Verification> verification;
  if (found) {
    BISECTD_TRY_ASSIGN(auto checked, check_culprit(t, verification));
    if (checked != Checked::verified) {
      return {};
    }
  }
  // 3. Conclude and store the result with its mail.
  return store_result(t, conclude(t, verification));
}

} // namespace bisectd::daemon::bisection
