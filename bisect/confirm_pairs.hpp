#pragma once
// How many interleaved culprit/parent verification pairs are enough: a one-sided sequential probability ratio
// test on the paired log differences, so a shift that is already beyond doubt at the job's confidence stops the
// pairs early, and an ambiguous one runs to the maximum. Pure; unit-tested.
//
// The pairs guard the search's answer against what its own runs cannot rule out: a shift that lab drift or chance
// put at this commit. H0: the culprit does not shift at all (mu <= 0) vs H1: it shifts as the search saw (mu = mu1),
// both oriented in the shift's direction; whether that shift exceeds the job's threshold is the search's estimate
// (the pairs stop early only when it does). Pair i's difference u_i = s * (y_culprit,i - y_parent,i) has variance
// 2 sigma^2 (one run on each side); its log likelihood ratio term is
//   l_i = mu1 / (2 sigma^2) * (clip(u_i) - mu1 / 2),   clip to [-sqrt(2) sigma, mu1 + sqrt(2) sigma],
// a pair's standard deviation below no shift and above the search's. Without the clip E[exp(l_i)] = 1 under
// mu = 0 (gaussian runs); the upper clip lowers it more than the lower one raises it: at most 0.9992 for
// d = mu1 / (sqrt(2) sigma) from 0.1 to 4 (numerically), less for mu < 0 or a sigma above the true one. So
// exp(sum l_i) is a nonnegative supermartingale and by Ville's inequality the chance it ever reaches 1/alpha is at
// most alpha. That is the stated error bound: P(stop early | the culprit does not shift) <= alpha. The clip also
// keeps one wild run from deciding either way: it counts no more than a pair one standard deviation beyond the
// level it is nearer (at d = 1.5 about 2.3 pairs' worth; unclipped, one run 10 sigmas off would outweigh ten).

#include <vector>

namespace bisectd::bisect {

// The fewest pairs the test stops after: with the clip one pair adds at most d^2 / 2 + d (d = the search's shift
// over a pair's standard deviation), so at d up to 2.2 no single pair reaches log(100), and three pairs span at
// least three visits a side. The daemon's confirm summary reads a stop before the job's maximum as "the
// shift holds"; at the maximum its rank test judges.
constexpr int k_min_confirm_pairs = 3;

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
