#pragma once
// When the revert check has measured the reverted head enough: a sequential probability ratio test of its runs
// between the two levels verification already knows, so that a clear answer costs a few runs and only a doubtful
// one pays for the maximum. Pure; unit-tested.
//
// The levels are the parent's and the culprit's, in log values, from the runs taken just before the revert check
// (the confirm pairs: in the verification's time window, so slow drift of the lab hits them as it hits the reverted
// head). H1 (the revert undoes the change): the reverted head's runs lie at the parent's level; H0 (it does not):
// at the culprit's. Run i adds
//   l_i = (before - after) / sigma^2 * (clip(y_i) - (before + after) / 2),
// where clip keeps y_i within |before - after| / 2 + sigma of the midpoint: a wild run counts no more than a run one
// sigma beyond the level it is nearer (for d = |before - after| / sigma up to 2.2 that is less than log(100), and
// `min_runs` keeps one boot from deciding at any d).
// The test stops when the sum leaves (-log(1/alpha), log(1/alpha)), which for gaussian runs at a sigma at least the
// true one bounds each wrong stop by alpha (Wald), and at `max_runs` otherwise. A revert that undoes half the change
// drifts toward neither bound and runs to the maximum, which is the case its verdict (partly) needs the runs for.

#include <vector>

namespace bisectd::bisect {

struct RevertTest {
  double sigma = 0;  // run-to-run sigma of log values; <= 0: unknown, run to the maximum
  double before = 0; // log level before the culprit (its parent's)
  double after = 0;  // log level with the culprit
  double alpha = 0.01;
  int min_runs = 4; // two visits of two runs: one boot alone never decides
  int max_runs = 12;
};

enum class RevertDecision { more, comes_back, does_not_come_back, at_maximum };

struct RevertState {
  RevertDecision decision = RevertDecision::more;
  int runs = 0;
  double log_lr = 0; // > 0 favours "comes back"
  double bound = 0;  // log(1 / alpha)
};

// The decision after the reverted head's runs so far (log values, in the order they were taken).
RevertState decide_revert(const std::vector<double>& reverted, const RevertTest& test);

} // namespace bisectd::bisect
