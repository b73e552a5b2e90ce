// detect_change_points on constructed series: no change, steps, outliers, bimodal noise, gates, the tip.

#include "bisect/detect.hpp"
#include "test_detect_series.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>

using namespace bisectd::bisect;
using testing::near;
using testing::Kind;
using testing::make_series;

TEST_CASE("detect: pure noise gives (almost) no change point", "[detect]") {
  // 60 series, 30,000 commits of 2% noise. detect-sim measures ~0.05 false alarms per 1000 commits, so more
  // than one here means the detector got noisy (seed 1, gaussian, has one: p = 1.3e-5 at commit 238).
  std::size_t alarms = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (Kind kind : {Kind::gaussian, Kind::bimodal, Kind::outliers}) {
      alarms += detect_change_points(make_series(500, {}, 0.02, seed, kind), DetectOptions{}).size();
    }
  }
  CHECK(alarms <= 1);
  CHECK(detect_change_points(make_series(500, {}, 0.02, 2), DetectOptions{}).empty());
}

TEST_CASE("detect: one regression step", "[detect]") {
  const std::vector<SeriesPoint> series = make_series(200, {{100, -0.05}}, 0.01, 7);
  const std::vector<ChangePoint> cps = detect_change_points(series, DetectOptions{});
  REQUIRE(cps.size() == 1);
  CHECK(near(cps[0].index, 100, 2));
  CHECK(cps[0].id == series[cps[0].index].id);
  CHECK(cps[0].direction == ShiftDirection::down);
  CHECK(cps[0].relative_change == Approx(-0.05).margin(0.01));
  CHECK(cps[0].before == Approx(1000.0).epsilon(0.01));
  CHECK(cps[0].after == Approx(950.0).epsilon(0.01));
  CHECK(cps[0].p_value < 1e-6);
  CHECK(cps[0].confidence > 0.99);
  CHECK(cps[0].range_begin <= 100);
  CHECK(cps[0].range_end >= 100);
  CHECK(cps[0].range_begin <= cps[0].index);
  CHECK(cps[0].index <= cps[0].range_end);
  CHECK(cps[0].range_end - cps[0].range_begin < 15);
}

TEST_CASE("detect: improvement and regression are told apart", "[detect]") {
  const std::vector<ChangePoint> cps =
    detect_change_points(make_series(300, {{100, -0.04}, {200, 0.06}}, 0.01, 11), DetectOptions{});
  REQUIRE(cps.size() == 2);
  CHECK(near(cps[0].index, 100, 2));
  CHECK(cps[0].direction == ShiftDirection::down);
  CHECK(cps[0].relative_change < 0);
  CHECK(near(cps[1].index, 200, 2));
  CHECK(cps[1].direction == ShiftDirection::up);
  CHECK(cps[1].relative_change == Approx(0.06).margin(0.01));
}

TEST_CASE("detect: two steps in the same direction and a short bump", "[detect]") {
  const std::vector<ChangePoint> same =
    detect_change_points(make_series(400, {{120, 0.05}, {260, 0.05}}, 0.015, 3), DetectOptions{});
  REQUIRE(same.size() == 2);
  CHECK(near(same[0].index, 120, 2));
  CHECK(near(same[1].index, 260, 2));
  // Up then back down 25 commits later: both edges are reported.
  const std::vector<ChangePoint> bump =
    detect_change_points(make_series(300, {{150, 0.06}, {175, -0.06 / 1.06}}, 0.01, 5), DetectOptions{});
  REQUIRE(bump.size() == 2);
  CHECK(bump[0].direction == ShiftDirection::up);
  CHECK(bump[1].direction == ShiftDirection::down);
}

TEST_CASE("detect: outlier runs and whole outlier commits do not raise change points", "[detect]") {
  std::vector<SeriesPoint> series = make_series(300, {{150, 0.05}}, 0.01, 13, Kind::outliers);
  for (std::size_t i : {40, 41, 90, 220, 221, 222}) {
    for (double& v : series[i].samples) {
      v *= 0.6; // a commit where every run lost 40% (a broken run of the benchmark box)
    }
  }
  const std::vector<ChangePoint> cps = detect_change_points(series, DetectOptions{});
  REQUIRE(cps.size() == 1);
  CHECK(near(cps[0].index, 150, 2));
}

TEST_CASE("detect: bimodal noise", "[detect]") {
  const std::vector<ChangePoint> cps =
    detect_change_points(make_series(300, {{140, 0.06}}, 0.01, 17, Kind::bimodal), DetectOptions{});
  REQUIRE(cps.size() == 1);
  CHECK(near(cps[0].index, 140, 3));
  CHECK(cps[0].direction == ShiftDirection::up);
}

TEST_CASE("detect: gates on relative change and on the tip", "[detect]") {
  // 0.8% step with almost no noise: significant, but below the 1% job threshold.
  const std::vector<SeriesPoint> small = make_series(200, {{100, 0.008}}, 0.0005, 19);
  CHECK(detect_change_points(small, DetectOptions{}).empty());
  DetectOptions loose;
  loose.min_relative_change = 0.005;
  REQUIRE(detect_change_points(small, loose).size() == 1);
  // A step 4 commits before the tip stays pending; with 30 commits after it is reported.
  CHECK(detect_change_points(make_series(104, {{100, 0.08}}, 0.01, 23), DetectOptions{}).empty());
  CHECK(detect_change_points(make_series(130, {{100, 0.08}}, 0.01, 23), DetectOptions{}).size() == 1);
}

TEST_CASE("detect: index refers to the input even with empty points; short series give nothing", "[detect]") {
  std::vector<SeriesPoint> series = make_series(200, {{100, 0.06}}, 0.01, 29);
  series.insert(series.begin() + 50, SeriesPoint{"no-runs", {}});
  series.insert(series.begin() + 60, SeriesPoint{"failed-runs", {NAN, INFINITY}});
  series[70].samples.push_back(NAN);
  const std::vector<ChangePoint> cps = detect_change_points(series, DetectOptions{});
  REQUIRE(cps.size() == 1);
  CHECK(near(cps[0].index, 102, 2));
  CHECK(cps[0].id == series[cps[0].index].id);
  CHECK(detect_change_points(make_series(10, {{5, 0.5}}, 0.01, 1), DetectOptions{}).empty());
  CHECK(detect_change_points({}, DetectOptions{}).empty());
}

TEST_CASE("detect: constant and quantized series", "[detect]") {
  std::vector<SeriesPoint> series;
  for (int i = 0; i < 100; ++i) {
    series.push_back(SeriesPoint{"c" + std::to_string(i), {i < 50 ? 100.0 : 110.0}});
  }
  const std::vector<ChangePoint> cps = detect_change_points(series, DetectOptions{});
  REQUIRE(cps.size() == 1);
  CHECK(cps[0].index == 50);
  CHECK(cps[0].relative_change == Approx(0.1));
  std::vector<SeriesPoint> flat(100, SeriesPoint{"x", {5.0, 5.0}});
  CHECK(detect_change_points(flat, DetectOptions{}).empty());
}
