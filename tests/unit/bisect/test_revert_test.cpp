// The revert check's sequential test: a clear answer either way stops after the minimum, half a recovery runs to
// the maximum, one wild run does not decide, and its wrong stops stay within alpha (seeded gaussian runs).
#include "bisect/revert_test.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace bisectd::bisect;

namespace {

// The running example: parent at 0, culprit 6.5 % lower, runs at 3 % (d = 2.2), two visits of two runs first.
RevertTest running_example() {
  RevertTest t;
  t.sigma = 0.03;
  t.before = 0;
  t.after = std::log1p(-0.065);
  t.alpha = 0.01;
  t.min_runs = 4;
  t.max_runs = 12;
  return t;
}

std::vector<double> runs_at(double level, const std::vector<double>& noise_in_sigmas) {
  std::vector<double> out;
  for (double e : noise_in_sigmas) {
    out.push_back(level + 0.03 * e);
  }
  return out;
}

} // namespace

TEST_CASE("revert test: a revert that comes back, or does not, stops after the first two visits",
          "[bisect][revert]") {
  auto t = running_example();
  auto back = decide_revert(runs_at(t.before, {0.4, -0.7, 0.2, -0.1}), t);
  CHECK(back.decision == RevertDecision::comes_back);
  CHECK(back.runs == 4);
  CHECK(back.bound == Approx(std::log(100.0)));
  auto not_back = decide_revert(runs_at(t.after, {-0.3, 0.6, 0.1, -0.5}), t);
  CHECK(not_back.decision == RevertDecision::does_not_come_back);
  CHECK(not_back.log_lr < -not_back.bound);
  // Before the minimum even a clear answer waits: one boot alone never decides.
  CHECK(decide_revert(runs_at(t.before, {0.0, 0.0, 0.0}), t).decision == RevertDecision::more);
}

TEST_CASE("revert test: half a recovery runs to the maximum; unknown noise never stops early", "[bisect][revert]") {
  auto t = running_example();
  double half = 0.5 * (t.before + t.after);
  std::vector<double> e = {0.5, -0.5, 0.3, -0.3, 0.1, -0.1, 0.4, -0.4, 0.2, -0.2, 0.6, -0.6};
  for (std::size_t n = 4; n < e.size(); ++n) {
    std::vector<double> head(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(n));
    INFO("runs " << n);
    CHECK(decide_revert(runs_at(half, head), t).decision == RevertDecision::more);
  }
  CHECK(decide_revert(runs_at(half, e), t).decision == RevertDecision::at_maximum);
  t.sigma = 0;
  CHECK(decide_revert(runs_at(t.before, {0, 0, 0, 0, 0}), t).decision == RevertDecision::more);
}

TEST_CASE("revert test: one wild run does not outweigh the runs that agree", "[bisect][revert]") {
  auto t = running_example();
  // Three runs at the parent's level and one 20 sigmas below the culprit's: the clip holds the wild run to the
  // weight of a run one sigma beyond the culprit's level, and the three decide.
  auto v = decide_revert(runs_at(t.before, {0.1, -0.2, 0.0, -20.0 + t.after / 0.03}), t);
  CHECK(v.log_lr > 0);
  // Alone with one agreeing run it cannot end the test either way.
  CHECK(decide_revert(runs_at(t.before, {0.0, -20.0 + t.after / 0.03}), t).decision == RevertDecision::more);
}

TEST_CASE("revert test: wrong stops within alpha, and the runs it takes", "[bisect][revert]") {
  // 4000 seeded sequences at each level, runs added one by one up to the maximum: the share that stops on the
  // wrong side is at most alpha = 1 %, and a clear answer takes about the minimum.
  std::mt19937_64 rng(20261207);
  std::normal_distribution<double> n01;
  auto t = running_example();
  const int trials = 4000;
  for (bool comes_back : {true, false}) {
    int wrong = 0, used = 0;
    for (int k = 0; k < trials; ++k) {
      std::vector<double> runs;
      RevertState s;
      while (s.decision == RevertDecision::more) {
        runs.push_back((comes_back ? t.before : t.after) + t.sigma * n01(rng));
        s = decide_revert(runs, t);
      }
      auto expected = comes_back ? RevertDecision::comes_back : RevertDecision::does_not_come_back;
      wrong += s.decision != expected && s.decision != RevertDecision::at_maximum ? 1 : 0;
      used += s.runs;
    }
    INFO((comes_back ? "comes back" : "does not come back") << ": " << wrong << " wrong, " << used << " runs");
    CHECK(wrong <= trials / 100);
    CHECK(static_cast<double>(used) / trials < 5.0);
  }
}
