#pragma once
// Classic bisection, the baseline behind Method::classic: a fixed number of runs per commit, the endpoints first,
// each tested commit judged "like good" or "like bad" against the endpoint samples, then the midpoint of the
// remaining linear range (skipped commits avoided like `git bisect skip`).

#include "bisect/engine.hpp"
#include "bisect/engine_data.hpp"

#include <vector>

namespace bisectd::bisect {

// How a tested commit is judged against the endpoints.
enum class ClassicRule {
  lkp,          // LKP's non-overlap rule (lkp.md §2) + threshold; undecided -> up to 2x runs, then nearest median
  nearest_mean, // nearest endpoint mean in log space (the textbook fixed-k bisection)
};

// LKP ChangedStat#change? on log values: trims n>>5 per end, then min_b > median_a && median_b > max_a (or the
// mirror image), and |median_b - median_a| > log1p(threshold).
bool lkp_changed(std::vector<double> a, std::vector<double> b, double threshold);

// One classic step, replayed from the samples in `data` (the decisions are a pure function of the samples).
Step classic_step(const Problem& problem, const ChainData& data, ClassicRule rule = ClassicRule::lkp);

// The non-skipped commit strictly inside (lo, hi) nearest to the midpoint (lower one on ties), if any.
std::optional<std::size_t> classic_midpoint(const std::vector<Candidate>& chain, std::size_t lo, std::size_t hi);

} // namespace bisectd::bisect
