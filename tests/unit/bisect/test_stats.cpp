// The statistics helpers against hand-computed values (see the comments for each derivation).

#include "bisect/stats.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace bisectd::bisect;

TEST_CASE("stats: mean, variance, median, quantile", "[stats]") {
  const std::vector<double> v = {4, 1, 3, 2};
  CHECK(mean(v) == Approx(2.5));
  CHECK(variance(v) == Approx(5.0 / 3.0)); // (2.25 + 0.25 + 0.25 + 2.25) / 3
  CHECK(stddev(v) == Approx(std::sqrt(5.0 / 3.0)));
  CHECK(median(v) == Approx(2.5));
  CHECK(median(std::vector<double>{3, 1, 2}) == Approx(2.0));
  CHECK(quantile(v, 0.25) == Approx(1.75)); // position 0.75 between 1 and 2
  CHECK(quantile(v, 1.0) == Approx(4.0));
  CHECK(std::isnan(median(std::vector<double>{})));
  CHECK(variance(std::vector<double>{7}) == 0.0);
}

TEST_CASE("stats: MAD, robust sigma, diff sigma, Hodges-Lehmann", "[stats]") {
  const std::vector<double> v = {1, 2, 3, 4, 100};
  CHECK(mad(v) == Approx(1.0)); // deviations from 3: 2 1 0 1 97
  CHECK(robust_sigma(v) == Approx(1.4826));
  // Differences +-1: |d| median 1, so 1.4826 / sqrt(2).
  CHECK(diff_sigma(std::vector<double>{0, 1, 0, 1, 0}) == Approx(1.4826 / std::sqrt(2.0)));
  // One level step among constant values does not move the estimate off 0.
  CHECK(diff_sigma(std::vector<double>{5, 5, 5, 5, 9, 9, 9, 9}) == 0.0);
  // Pairwise differences of {1,2} to {3,5}: 2 4 1 3 -> median 2.5.
  CHECK(hodges_lehmann_shift(std::vector<double>{1, 2}, std::vector<double>{3, 5}) == Approx(2.5));
}

TEST_CASE("stats: distribution functions", "[stats]") {
  CHECK(normal_cdf(0.0) == Approx(0.5));
  CHECK(normal_cdf(1.96) == Approx(0.9750021).epsilon(1e-6));
  CHECK(normal_quantile(0.975) == Approx(1.959964).epsilon(1e-6));
  CHECK(normal_quantile(0.005) == Approx(-2.575829).epsilon(1e-6));
  CHECK(regularized_beta(2, 3, 0.5) == Approx(11.0 / 16.0)); // sum_{j=2..4} C(4,j) / 16
  CHECK(student_t_cdf(1.0, 1.0) == Approx(0.75));            // Cauchy: 1/2 + atan(1)/pi
  CHECK(student_t_cdf(2.0, 10.0) == Approx(1.0 - 0.073388 / 2.0).epsilon(1e-5));
  CHECK(student_t_cdf(-2.0, 10.0) == Approx(0.073388 / 2.0).epsilon(1e-4));
}

TEST_CASE("stats: t-tests", "[stats]") {
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {6, 7, 8, 9, 10};
  // Means 3 and 8, variances 2.5: se = 1, t = 5, Welch df = 1 / (2 * 0.0625 / 4 * 4) = 8.
  const TTestResult w = welch_t_test(a, b);
  CHECK(w.t == Approx(5.0));
  CHECK(w.df == Approx(8.0));
  CHECK(w.p_value == Approx(0.0010528).epsilon(1e-4));
  const TTestResult s = student_t_test(a, b);
  CHECK(s.t == Approx(5.0));
  CHECK(s.df == Approx(8.0));
  CHECK(welch_t_test(b, a).t == Approx(-5.0));
  CHECK(welch_t_test(std::vector<double>{1}, b).p_value == 1.0);
}

TEST_CASE("stats: Mann-Whitney U exact", "[stats]") {
  const RankTestResult r = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  CHECK(r.method == PValueMethod::exact);
  CHECK(r.u == Approx(9.0));
  CHECK(r.p_value == Approx(0.1)); // 2 * 1/20
  // 5 vs 5 fully separated: 2 / C(10,5).
  CHECK(mann_whitney_u(std::vector<double>{6, 7, 8, 9, 10}, std::vector<double>{1, 2, 3, 4, 5}).p_value ==
        Approx(2.0 / 252.0));
  // Interleaved 3 vs 3: U = 6; counts of U 0..9 are 1 1 2 3 3 3 3 2 1 1, P(U >= 6) = 7/20.
  const RankTestResult mid = mann_whitney_u(std::vector<double>{1, 3, 5}, std::vector<double>{2, 4, 6});
  CHECK(mid.u == Approx(6.0));
  CHECK(mid.p_value == Approx(0.7));
  CHECK(mann_whitney_exact_p(0.0, 4, 4) == Approx(2.0 / 70.0));
}

TEST_CASE("stats: Mann-Whitney U with ties uses the corrected normal approximation", "[stats]") {
  // Ranks: 1 | 2,2,2 -> 3 | 3,3 -> 5.5 | 7 | 8; R_b = 3 + 5.5 + 7 + 8 = 23.5, U = 13.5, mean 8,
  // var = 16/12 * (9 - 30/56) = 11.2857; p = 2 * (1 - Phi((5.5 - 0.5) / 3.35942)) = 0.13666.
  const RankTestResult r = mann_whitney_u(std::vector<double>{1, 2, 2, 3}, std::vector<double>{2, 3, 4, 5});
  CHECK(r.method == PValueMethod::normal);
  CHECK(r.u == Approx(13.5));
  CHECK(r.z == Approx(5.5 / std::sqrt(11.285714)).epsilon(1e-5));
  CHECK(r.p_value == Approx(0.13666).epsilon(1e-3));
  CHECK(mann_whitney_u(std::vector<double>{1, 1}, std::vector<double>{1, 1}).p_value == 1.0);
  CHECK(mann_whitney_u(std::vector<double>{}, std::vector<double>{1}).p_value == 1.0);
}

TEST_CASE("stats: Mann-Whitney U exact at 25 vs 25", "[stats]") {
  std::vector<double> a, b;
  for (int i = 0; i < 25; ++i) {
    a.push_back(i * 2.0);
    b.push_back(i * 2.0 + 15.0); // U = 472, z ~ 3.1
  }
  const RankTestResult exact = mann_whitney_u(a, b);
  REQUIRE(exact.method == PValueMethod::exact);
  CHECK(exact.u == Approx(472.0));
  // Brute-force count (recurrence f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u)): 2 * P(U >= 472) = 0.0016129849.
  CHECK(exact.p_value == Approx(0.0016129849).epsilon(1e-6));
  // The normal approximation is close but not equal this far in the tail (0.00204).
  const double normal = 2.0 * normal_cdf(-(std::abs(exact.u - 312.5) - 0.5) / std::sqrt(25.0 * 25.0 * 51.0 / 12.0));
  CHECK(exact.p_value == Approx(normal).epsilon(0.3));
}
