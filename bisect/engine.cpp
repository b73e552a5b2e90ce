#include "bisect/engine.hpp"

#include "bisect/bcb.hpp"
#include "bisect/classic.hpp"
#include "bisect/engine_data.hpp"

namespace bisectd::bisect {

Step next_step(const Problem& problem) {
  std::string error;
  auto data = make_chain_data(problem, error);
  if (!data) {
    Step step;
    step.verdict = Verdict::ambiguous;
    step.trace.push_back("invalid problem: " + error);
    return step;
  }
  if (problem.settings.method == Method::classic) {
    return classic_step(problem, *data, ClassicRule::lkp);
  }
  return bcb_step(problem, *data);
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
  case Verdict::need_runs: return "need_runs";
  case Verdict::found: return "found";
  case Verdict::ambiguous: return "ambiguous";
  case Verdict::no_change: return "no_change";
  case Verdict::budget_exhausted: return "budget_exhausted";
  }
  return "unknown";
}

const char* to_string(Method method) { return method == Method::bcb ? "bcb" : "classic"; }

} // namespace bisectd::bisect
