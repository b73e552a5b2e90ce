#pragma once
// How many interleaved culprit/parent verification pairs are enough: a one-sided sequential probability ratio
// test on the paired log differences, so a shift that is already beyond doubt at the job's confidence stops the
// pairs early, and an ambiguous one runs to the maximum. Pure; unit-tested.
//
// H0: the culprit's mean log shift is at most the job's threshold (mu <= mu0) vs H1: it is the shift the search
// saw (mu = mu1), both oriented in the shift's direction. Pair i's difference u_i = s * (y_culprit,i - y_parent,i)
// has variance 2 sigma^2 (one run on each side); its log likelihood ratio term is
//   l_i = (mu1 - mu0) / (2 sigma^2) * (min(u_i, cap) - (mu0 + mu1) / 2),   cap = mu1 + 3 sqrt(2) sigma.
// Under H0 (gaussian runs, any sigma' >= the true sigma) E[exp(l_i)] <= 1, and clipping only the side that
// favours H1 keeps it so: exp(sum l_i) is a nonnegative supermartingale and by Ville's inequality the chance it
// ever reaches 1/alpha is at most alpha. That is the stated error bound: P(stop early | the shift is no larger
// than the threshold) <= alpha. The clip also keeps one wild run from ending the pairs by itself.

#include <vector>

namespace bisectd::bisect {

// The fewest pairs the daemon's confirm summary can judge: its rank test (5 vs 5 runs) first reaches
// p < 0.01 at five runs a side, so stopping earlier would make it report "the shift does not hold".
constexpr int k_min_confirm_pairs = 5;

struct PairTest {
  double sigma = 0;     // run-to-run sigma of log values; <= 0: unknown, never stop early
  double threshold = 0; // relative shift the job does not care about (e.g. 0.02)
  double shift = 0;     // relative shift the search estimated (e.g. -0.065); its sign orients the test
  double alpha = 0.01;  // error bound (the job's delta)
  int max_pairs = 10;
};

enum class PairDecision { more, confirmed, at_maximum };

struct PairVerdict {
  PairDecision decision = PairDecision::more;
  int pairs = 0;     // complete pairs used
  double log_lr = 0; // sum of l_i
  double bound = 0;  // log(1 / alpha)
};

// The decision after the pairs so far: parent[i] and culprit[i] are the log values of the i-th verification
// run on each side, in the order they were taken (unmatched extra runs wait for their partner).
PairVerdict decide_pairs(const std::vector<double>& parent, const std::vector<double>& culprit, const PairTest& test);

} // namespace bisectd::bisect
