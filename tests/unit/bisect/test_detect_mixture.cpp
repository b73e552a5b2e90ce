// The two-mode run model of the detector (bisect/detect_mixture.cpp): fitted on bimodal runs only, and a
// boot's level taken from its usual mode.

#include "bisect/detect_internal.hpp"
#include "test_detect_series.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace bisectd::bisect;

namespace {

std::vector<std::vector<double>> runs_of(const std::vector<SeriesPoint>& series) {
  std::vector<std::vector<double>> out;
  for (const SeriesPoint& p : series) {
    out.push_back(p.samples);
  }
  return out;
}

} // namespace

TEST_CASE("mixture: two modes of the runs are fitted with their share, distance and side", "[detect][mixture]") {
  // 30 % of the runs 4 sigma (4 %) low.
  const detail::RunMixture m =
    detail::fit_run_mixture(runs_of(testing::make_series(400, {{200, 0.05}}, 0.01, 7, testing::Kind::bimodal)));
  REQUIRE(m.found);
  CHECK(m.share > 0.22);
  CHECK(m.share < 0.38);
  CHECK(m.gap < -0.034);
  CHECK(m.gap > -0.046);
  CHECK(m.sigma > 0.008);
  CHECK(m.sigma < 0.012);
}

TEST_CASE("mixture: one mode, rare outliers and single runs are not taken for two modes", "[detect][mixture]") {
  CHECK_FALSE(detail::fit_run_mixture(runs_of(testing::make_series(400, {}, 0.01, 8))).found);
  CHECK_FALSE(
    detail::fit_run_mixture(runs_of(testing::make_series(400, {}, 0.01, 9, testing::Kind::outliers))).found);
  CHECK_FALSE(
    detail::fit_run_mixture(runs_of(testing::make_series(400, {}, 0.01, 10, testing::Kind::bimodal, 1))).found);
}

TEST_CASE("mixture: a boot's level is its usual mode's, not the median of its runs", "[detect][mixture]") {
  const detail::RunMixture m{true, 0.3, -0.04, 0.01};
  const std::vector<double> two_low = {1001.0, 961.0, 958.0}; // median 961: in the minority mode
  CHECK(detail::mixture_level(two_low, m) == Approx(1000.0).margin(4.0));
  const std::vector<double> usual = {1003.0, 998.0, 1001.0};
  CHECK(detail::mixture_level(usual, m) == Approx(1000.667).margin(0.5));
  // Without a fitted mixture: the median.
  CHECK(detail::mixture_level(two_low, detail::RunMixture{}) == 961.0);
}
