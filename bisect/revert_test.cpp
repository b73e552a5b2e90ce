#include "bisect/revert_test.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::bisect {

RevertState decide_revert(const std::vector<double>& reverted, const RevertTest& test) {
  RevertState s;
  s.runs = static_cast<int>(reverted.size());
  s.bound = std::log(1.0 / std::clamp(test.alpha, 1e-12, 0.5));
  double gap = test.before - test.after;
  if (test.sigma > 0 && std::abs(gap) > 0) {
    double mid = 0.5 * (test.before + test.after);
    double reach = 0.5 * std::abs(gap) + test.sigma;
    for (double y : reverted) {
      s.log_lr += gap / (test.sigma * test.sigma) * std::clamp(y - mid, -reach, reach);
    }
  }
  if (s.runs >= test.min_runs && std::abs(s.log_lr) >= s.bound) {
    s.decision = s.log_lr > 0 ? RevertDecision::comes_back : RevertDecision::does_not_come_back;
  } else if (s.runs >= test.max_runs) {
    s.decision = RevertDecision::at_maximum;
  }
  return s;
}

} // namespace bisectd::bisect
