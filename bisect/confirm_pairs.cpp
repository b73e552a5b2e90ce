#include "bisect/confirm_pairs.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::bisect {

PairVerdict decide_pairs(const std::vector<double>& parent, const std::vector<double>& culprit, const PairTest& test) {
  PairVerdict v;
  v.pairs = static_cast<int>(std::min(parent.size(), culprit.size()));
  v.bound = std::log(1.0 / std::clamp(test.alpha, 1e-12, 0.5));
  if (v.pairs >= test.max_pairs) {
    v.pairs = test.max_pairs;
    v.decision = PairDecision::at_maximum;
  }
  double sign = test.shift < 0 ? -1.0 : 1.0;
  double beyond = std::abs(std::log1p(sign * std::max(0.0, test.threshold)));
  double mu1 = std::abs(std::log1p(std::max(test.shift, -0.999)));
  if (!(test.sigma > 0) || !(mu1 > beyond)) {
    return v; // unknown noise, or a shift the job does not care about: the maximum decides
  }
  double var = 2 * test.sigma * test.sigma;
  double sd = std::sqrt(var);
  for (int i = 0; i < v.pairs; ++i) {
    double u = sign * (culprit[static_cast<std::size_t>(i)] - parent[static_cast<std::size_t>(i)]);
    v.log_lr += mu1 / var * (std::clamp(u, -sd, mu1 + sd) - 0.5 * mu1);
  }
  bool enough = v.pairs >= std::min(test.max_pairs, k_min_confirm_pairs);
  if (v.decision == PairDecision::more && enough && v.log_lr >= v.bound) {
    v.decision = PairDecision::confirmed;
  }
  return v;
}

} // namespace bisectd::bisect
