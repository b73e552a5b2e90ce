#pragma once
// BCB (Bayesian change-point bisection), the default method: posterior from bcb_model, next runs by expected
// information gain per second of cost, stop at P(culprit) >= 1 - delta or the budget, then interleaved
// culprit/parent verification pairs folded into the posterior before the verdict.

#include "bisect/bcb_model.hpp"
#include "bisect/engine.hpp"
#include "bisect/engine_data.hpp"

#include <vector>

namespace bisectd::bisect {

// Everything one BCB step derives from the problem (built once per next_step call).
struct BcbContext {
  const Problem* problem = nullptr;
  const ChainData* data = nullptr;
  BcbPriors priors;
  RunModel run_model;        // how runs are weighted (learned, always on)
  bool heavy_tailed = false; // some within-build residual lies beyond 4.5 robust sigmas (reported only)
  std::vector<BcbUnit> units;
  std::vector<double> prior;    // per commit, normalized to 1 - p_none
  std::vector<double> prefix_a; // prefix sums of prior
  std::vector<double> prefix_b; // prefix sums of prior * log(prior)
  BcbPosterior post;
  std::vector<double> p;      // P(first bad = i)
  std::vector<double> cdf;    // P(first bad <= i)
  std::vector<bool> pickable; // a build we may run: canonical, not skipped, relevant (or an endpoint)
};

// Priors from the settings: sigma from `noise` (nu0 = noise_runs) or a weak default (nu0 = 1, 5 %), the shift
// centred on `expected_shift` when known. Components: boot variance lambda in {0, 1} x drift q in {0, 0.3}.
BcbPriors bcb_priors(const Settings& settings);

// Builds the context (posterior included) for `problem`.
BcbContext make_bcb_context(const Problem& problem, const ChainData& data);

// The next BCB step.
Step bcb_step(const Problem& problem, const ChainData& data);

// Posterior weight of the model components with boot-to-boot variance (lambda > 0), and with drift (q > 0).
double boot_weight(const BcbContext& ctx);
double drift_weight(const BcbContext& ctx);

// Search picks (no verification): expected information gain per second over candidate commits near the
// posterior quantiles j/(K+1), distinct, at most idle_machines; none while anything is in flight (rounds are
// synchronous). Defined in bcb_picks.cpp.
std::vector<Pick> bcb_search_picks(const BcbContext& ctx, std::vector<std::string>& trace);

} // namespace bisectd::bisect
