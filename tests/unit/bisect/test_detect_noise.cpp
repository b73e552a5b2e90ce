// estimate_noise on data of known sigma, runs_for, confirm_shift and the LKP rule.

#include "bisect/detect.hpp"
#include "test_detect_series.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bisectd::bisect;
using testing::Kind;
using testing::make_series;

TEST_CASE("noise: run and commit sigma are recovered, steps removed", "[detect][noise]") {
  const NoiseEstimate n =
    estimate_noise(make_series(600, {{200, 0.08}, {400, -0.05}}, 0.02, 31, Kind::gaussian, 5, 0.01));
  CHECK(n.commits == 600);
  CHECK(n.runs == 3000);
  CHECK(n.runs_per_commit == Approx(5.0));
  CHECK(n.run_sigma == Approx(0.02).epsilon(0.1));
  CHECK(n.commit_sigma == Approx(0.01).epsilon(0.3));
  CHECK_FALSE(n.heavy_tailed);
  CHECK_FALSE(n.bimodal);
  const NoiseEstimate quiet = estimate_noise(make_series(400, {}, 0.03, 37));
  CHECK(quiet.run_sigma == Approx(0.03).epsilon(0.1));
  CHECK(quiet.commit_sigma < 0.01);
}

TEST_CASE("noise: bimodal and heavy-tailed metrics are flagged", "[detect][noise]") {
  const NoiseEstimate bimodal = estimate_noise(make_series(400, {}, 0.01, 41, Kind::bimodal));
  CHECK(bimodal.bimodal);
  const NoiseEstimate outliers = estimate_noise(make_series(400, {}, 0.01, 43, Kind::outliers));
  CHECK(outliers.heavy_tailed);
  CHECK_FALSE(outliers.bimodal);
  CHECK(outliers.run_sigma == Approx(0.01).epsilon(0.15));
  CHECK(estimate_noise({}).commits == 0);
}

TEST_CASE("noise: runs_for and confirm_runs_for", "[detect][noise]") {
  NoiseEstimate n;
  n.run_sigma = 0.02;
  // 6% shift: allowed point sigma 2% = run sigma -> 1 run. 3%: need median factor <= 0.25 -> 6 runs (0.215).
  CHECK(n.runs_for(0.06) == 1);
  CHECK(n.runs_for(0.03) == 6);
  CHECK(n.runs_for(-0.03) == 6); // regressions and improvements alike
  CHECK(n.runs_for(0.0) == -1);
  n.commit_sigma = 0.011;
  CHECK(n.runs_for(0.03) == -1); // jitter alone is above 3% / 3
  // 2 (z_.995 + z_.9)^2 (sigma/shift)^2 / (3/pi): 31.2 at shift = sigma, 7.8 at twice.
  CHECK(n.confirm_runs_for(0.02) == 32);
  CHECK(n.confirm_runs_for(0.04) == 8);
  CHECK(n.confirm_runs_for(0.2) == 5);
}

TEST_CASE("confirm_shift", "[detect][confirm]") {
  const std::vector<double> before = {100, 101, 99, 100.5, 99.5};
  const ShiftTest down = confirm_shift(before, {95, 94.5, 95.5, 96, 94}, 0.01);
  CHECK(down.confirmed);
  CHECK(down.lkp_changed);
  CHECK(down.relative_change == Approx(-0.05));
  CHECK(down.p_value == Approx(2.0 / 252.0));
  // Overlapping runs: no shift.
  const ShiftTest noise = confirm_shift({100, 102, 98, 101, 99}, {100.5, 99, 101.5, 98.5, 100}, 0.01);
  CHECK_FALSE(noise.confirmed);
  CHECK_FALSE(noise.lkp_changed);
  // Clean but 0.5%: below the threshold and LKP's 1.01 ratio.
  const ShiftTest small = confirm_shift(before, {100.5, 101.5, 99.5, 101, 100}, 0.01);
  CHECK_FALSE(small.confirmed);
  // 3 runs each cannot reach p < 0.01, but LKP's separated ranges confirm.
  const ShiftTest three = confirm_shift({100, 100.2, 99.8}, {105, 105.2, 104.9}, 0.02);
  CHECK(three.p_value == Approx(0.1));
  CHECK(three.lkp_changed);
  CHECK(three.confirmed);
  CHECK_FALSE(confirm_shift({}, {1.0}, 0.01).confirmed);
  // Failed runs (NaN) are ignored, not sorted into the ranks.
  const ShiftTest with_nan = confirm_shift({100, 101, NAN, 99, 100.5, 99.5}, {95, 94.5, 95.5, 96, 94, NAN}, 0.01);
  CHECK(with_nan.confirmed);
  CHECK(with_nan.p_value == Approx(2.0 / 252.0));
}

TEST_CASE("lkp_changed follows lib/changed_stat.rb", "[detect][confirm]") {
  // min_head > median_base and median_head > max_base.
  CHECK(lkp_changed({100, 101, 102}, {103, 104, 105}));
  // Head min below the base median: overlap.
  CHECK_FALSE(lkp_changed({100, 101, 102}, {100.5, 104, 105}));
  // Separated but ratio 1.005.
  CHECK_FALSE(lkp_changed({100, 100.1, 100.2}, {100.5, 100.6, 100.7}));
  // Fewer than 3 samples on both sides.
  CHECK_FALSE(lkp_changed({100, 101}, {110, 111}));
}
