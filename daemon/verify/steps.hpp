#pragma once
// The steps of CulpritVerifier::verify (verifier.cpp), one function each. Every step reads stored samples,
// queues what is missing (never twice: it looks at the bisection's requests, failed ones included) and
// fills its line and numbers into the Verification, or reports that it is still pending.

#include "daemon/verify/verifier.hpp"

#include <initializer_list>
#include <string>
#include <vector>

namespace bisectd::daemon::verify {

// What the steps share: the bisection, its job, the culprit and its first parent, the bisection's requests.
struct VerifyTarget {
  VerifyDeps deps;
  const storage::BisectionRow& b;
  const Job& job;
  const Suspect& suspect; // both sides with the commits that build identically
  std::vector<storage::RequestRow> requests;
  const std::string& culprit = suspect.culprit.front(); // the commits the checks rebuild and measure
  const std::string& parent = suspect.parent.front();
};

enum class StepState { done, pending };

// Plausibility: a diff touching only comments/docs/tests/another arch, or a build identical to the parent's,
// sets `implausible`. Needs no runs (both builds exist: they were measured).
Result<StepState> check_plausibility(VerifyTarget& t, Verification& v);

// Summarises the engine's interleaved culprit/parent pairs (samples with verification=1, no variant).
Result<StepState> summarise_confirm(VerifyTarget& t, Verification& v);

// Reverts the culprit on the bad head and measures the reverted head until it reads clearly at the parent's or the
// culprit's level (a sequential test, bisect/revert_test.hpp), then says how much of the change came back.
Result<StepState> check_revert(VerifyTarget& t, Verification& v);

// Rebuilds culprit and parent with forced alignment (variant "layout"), measures them interleaved, and sets
// `layout_artefact` when the shift vanishes.
Result<StepState> check_layout(VerifyTarget& t, Verification& v);

// --- shared by the steps (verifier.cpp) ---

// The primary-metric values of `commits` built with `variant` (only samples with verification=1 if asked).
Result<std::vector<double>> metric_values(VerifyTarget& t, const std::vector<std::string>& commits,
                                          const std::string& variant, bool verification_only = false);

// The bisection's requests for (commit, variant), oldest first.
std::vector<storage::RequestRow> requests_for(const VerifyTarget& t, const std::string& commit,
                                              const std::string& variant);

// True when any of `requests` is still queued, building or running.
bool any_open(const std::vector<storage::RequestRow>& requests);

// "build_failed: <message>" of the last failed request, or "no samples" when none failed.
std::string failure_text(const std::vector<storage::RequestRow>& requests);

// Queues one verification visit of `commit` (purpose verify) for the bisection.
Status enqueue_verify(VerifyTarget& t, const std::string& commit, const std::string& variant, int runs);

// The run sigma of log values the sequential checks (revert, layout) assume: the job's prior, or the runs' own
// spread when larger (each run's distance from its side's median, robust to wild runs; at least the true sigma
// keeps their error bounds).
double run_sigma(const Job& job, std::initializer_list<const std::vector<double>*> sides);

// Adds a step's line (first, or after the others) and stores it under details[step], with its numbers under
// details["numbers"][step] (the shape docs/API.md gives `verification`: step → one line).
void record_step(Verification& v, const std::string& step, const std::string& line, nlohmann::json numbers,
                 bool first = false);

} // namespace bisectd::daemon::verify
