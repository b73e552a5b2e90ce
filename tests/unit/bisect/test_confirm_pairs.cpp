// The sequential test of the verification pairs: it stops early on a clear shift, runs to the maximum on an
// ambiguous one, never stops before its minimum of three pairs, keeps one wild run from deciding, and holds its
// stated error bound under the null (measured with seeded gaussian pairs).
#include "bisect/confirm_pairs.hpp"
#include "bisect/engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>

using namespace bisectd::bisect;

namespace {

PairTest test_of(double shift) {
  PairTest t;
  t.sigma = 0.03;
  t.threshold = 0.02;
  t.shift = shift;
  t.alpha = 0.01;
  t.max_pairs = 10;
  return t;
}

// n pairs with parent at 0 and culprit at log1p(shift), the i-th pair's noise given in sigma units.
void pairs(std::vector<double>& parent, std::vector<double>& culprit, double shift, const std::vector<double>& e) {
  for (std::size_t i = 0; i + 1 < e.size(); i += 2) {
    parent.push_back(0.03 * e[i]);
    culprit.push_back(std::log1p(shift) + 0.03 * e[i + 1]);
  }
}

} // namespace

TEST_CASE("confirm pairs: a clear shift stops at the minimum of three pairs", "[bisect][pairs]") {
  std::vector<double> parent, culprit;
  pairs(parent, culprit, -0.10, {0.3, -0.5, -0.8, 0.2, 0.1, 0.9, -0.4, -0.1, 0.6, 0.4, -0.2, 0.7, 0.5, -0.6});
  auto t = test_of(-0.10);
  std::vector<double> p2(parent.begin(), parent.begin() + 2), c2(culprit.begin(), culprit.begin() + 2);
  auto two = decide_pairs(p2, c2, t);
  CHECK(two.log_lr > two.bound);            // the evidence is there already...
  CHECK(two.decision == PairDecision::more); // ...but two pairs are too few to stop on
  std::vector<double> p3(parent.begin(), parent.begin() + 3), c3(culprit.begin(), culprit.begin() + 3);
  auto three = decide_pairs(p3, c3, t);
  CHECK(three.decision == PairDecision::confirmed);
  CHECK(three.pairs == k_min_confirm_pairs);
  CHECK(three.bound == Approx(std::log(100.0)));
}

TEST_CASE("confirm pairs: an ambiguous shift runs to the maximum", "[bisect][pairs]") {
  // Pairs that differ by about a third of what the search saw (-6.5 %): neither no shift nor the search's.
  std::vector<double> parent, culprit;
  std::vector<double> e;
  for (int i = 0; i < 24; ++i) {
    e.push_back(((i * 7) % 5 - 2) * 0.4);
  }
  pairs(parent, culprit, -0.022, e);
  auto t = test_of(-0.065);
  for (std::size_t n = 1; n < 10; ++n) {
    std::vector<double> p(parent.begin(), parent.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<double> c(culprit.begin(), culprit.begin() + static_cast<std::ptrdiff_t>(n));
    INFO("pairs " << n);
    CHECK(decide_pairs(p, c, t).decision == PairDecision::more);
  }
  std::vector<double> p(parent.begin(), parent.begin() + 10), c(culprit.begin(), culprit.begin() + 10);
  auto v = decide_pairs(p, c, t);
  CHECK(v.decision == PairDecision::at_maximum);
  CHECK(v.pairs == 10);
  CHECK(v.log_lr < v.bound);
}

TEST_CASE("confirm pairs: unknown sigma, a shift within the threshold or unmatched runs never stop early",
          "[bisect][pairs]") {
  std::vector<double> parent, culprit;
  pairs(parent, culprit, -0.10, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  auto t = test_of(-0.10);
  t.sigma = 0;
  CHECK(decide_pairs(parent, culprit, t).decision == PairDecision::more);
  t = test_of(-0.015); // the search's shift is within the job's threshold: nothing to confirm early
  CHECK(decide_pairs(parent, culprit, t).decision == PairDecision::more);
  t = test_of(-0.10);
  std::vector<double> one_side(parent.begin(), parent.begin() + 2);
  CHECK(decide_pairs(one_side, culprit, t).pairs == 2);
  CHECK(decide_pairs(one_side, culprit, t).decision == PairDecision::more);
}

TEST_CASE("confirm pairs: one wild run does not decide, in either direction", "[bisect][pairs]") {
  // Four pairs with no shift, then one culprit run 20 sigmas low: the clip holds its weight to that of a pair one
  // standard deviation beyond the shift, less than the four null pairs weigh.
  std::vector<double> parent = {0.01, -0.02, 0.0, 0.015, -0.01};
  std::vector<double> culprit = {0.0, 0.01, -0.015, 0.02, -0.6};
  auto v = decide_pairs(parent, culprit, test_of(-0.065));
  CHECK(v.decision == PairDecision::more);
  CHECK(v.log_lr < 0);
  // And against it: three pairs at the shift, then one culprit run 20 sigmas high. Unclipped it would cost the
  // evidence of ten pairs; clipped, that of about two, and the three still lead.
  std::vector<double> p3 = {0.01, -0.02, 0.0, 0.015}, c3;
  for (double e : {0.005, -0.01, 0.01}) {
    c3.push_back(std::log1p(-0.065) + e);
  }
  c3.push_back(0.6);
  auto against = decide_pairs(p3, c3, test_of(-0.065));
  CHECK(against.decision == PairDecision::more);
  CHECK(against.log_lr > 0);
}

TEST_CASE("confirm pairs: the early stop's error rate under the null is within alpha", "[bisect][pairs]") {
  // 4000 seeded sequences of 10 pairs whose culprit does not shift (H0) and a search shift of -6.5 %: the share
  // that stops early is at most alpha = 1 % (Ville), here with room.
  std::mt19937_64 rng(20261202);
  std::normal_distribution<double> n01;
  auto t = test_of(-0.065);
  int early = 0;
  const int trials = 4000;
  for (int k = 0; k < trials; ++k) {
    std::vector<double> parent, culprit;
    for (int i = 0; i < 10; ++i) {
      parent.push_back(0.03 * n01(rng));
      culprit.push_back(0.03 * n01(rng));
      if (decide_pairs(parent, culprit, t).decision == PairDecision::confirmed) {
        ++early;
        break;
      }
    }
  }
  CHECK(early <= trials / 100);
  // And its power: a -10 % shift (3.5 sigma) that the search saw as such stops well before the maximum.
  t = test_of(-0.10);
  int stopped = 0, used = 0;
  for (int k = 0; k < 1000; ++k) {
    std::vector<double> parent, culprit;
    for (int i = 0; i < 10; ++i) {
      parent.push_back(0.03 * n01(rng));
      culprit.push_back(std::log1p(-0.10) + 0.03 * n01(rng));
      auto v = decide_pairs(parent, culprit, t);
      if (v.decision == PairDecision::confirmed) {
        ++stopped;
        used += v.pairs;
        break;
      }
    }
  }
  CHECK(stopped > 950);
  CHECK(static_cast<double>(used) / stopped < 6.5);
}
