// The long-segment pass of the detector (bisect/detect_long.cpp): on single-value series (one run per commit,
// no replicates), a small step between two long stable stretches is found at the step; a slow random walk of
// the level, which also moves long stretches apart, gets no change point from it.

#include "bisect/detect.hpp"
#include "bisect/detect_internal.hpp"
#include "test_detect_series.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

using namespace bisectd::bisect;
using testing::Noise;

namespace {

constexpr double k_sigma = 0.02; // relative noise of the single runs

// One run per commit around level 1000 (relative noise k_sigma) whose level takes a random walk of
// `step` (relative) per commit.
std::vector<SeriesPoint> walk_series(std::size_t commits, double step, std::uint64_t seed) {
  Noise noise(seed);
  std::vector<SeriesPoint> out;
  double walk = 0;
  for (std::size_t i = 0; i < commits; ++i) {
    walk += step * noise.normal();
    SeriesPoint p;
    p.id = "c" + std::to_string(i);
    p.samples.push_back(1000.0 * (1.0 + walk) * (1.0 + k_sigma * noise.normal()));
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<SeriesPoint> step_series(double sigmas, std::uint64_t seed) {
  return testing::make_series(600, {{300, sigmas * k_sigma}}, k_sigma, seed, testing::Kind::gaussian, 1);
}

bool at_step(const ChangePoint& cp) { return std::labs(static_cast<long>(cp.index) - 300) <= 5; }

DetectOptions without_long() {
  DetectOptions o;
  o.long_segments = false;
  return o;
}

std::vector<std::size_t> indices(const std::vector<ChangePoint>& cps) {
  std::vector<std::size_t> out;
  for (const ChangePoint& cp : cps) {
    out.push_back(cp.index);
  }
  return out;
}

} // namespace

TEST_CASE("long pass: a 1 sigma step between two 300-point stable stretches is found at the step", "[detect][long]") {
  // A series (seed 2) where the 50-point windows see no change.
  const std::vector<SeriesPoint> series = step_series(1.0, 2);
  CHECK(detect_change_points(series, without_long()).empty());
  const std::vector<ChangePoint> cps = detect_change_points(series, DetectOptions{});
  REQUIRE(cps.size() == 1);
  CHECK(cps[0].index == 300);
  CHECK(cps[0].direction == ShiftDirection::up);
  CHECK(cps[0].relative_change == Approx(0.02).margin(0.006));
  // Levels over the whole stretches, not 50-point windows.
  CHECK(cps[0].before == Approx(1000.0).margin(5.0));
  CHECK(cps[0].after == Approx(1020.0).margin(5.0));
}

TEST_CASE("long pass: small steps between long stretches, which the windows cannot see", "[detect][long]") {
  // 20 series each of a 1 sigma and a 0.7 sigma step at 300 of 600 single values. The 50-point windows and
  // k_sigma = 1 find 6 and 1 of them; the near-jump and hinge gates (which guard against ramps) still cost a
  // few: 17 and 11 are found with the long pass.
  for (const auto& [sigmas, with_long, without] : {std::tuple{1.0, 15, 8}, std::tuple{0.7, 9, 3}}) {
    int found = 0, found_without = 0, elsewhere = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const std::vector<SeriesPoint> series = step_series(sigmas, seed);
      for (const ChangePoint& cp : detect_change_points(series, DetectOptions{})) {
        (at_step(cp) ? found : elsewhere) += 1;
      }
      for (const ChangePoint& cp : detect_change_points(series, without_long())) {
        found_without += at_step(cp) ? 1 : 0;
      }
    }
    INFO("step of " << sigmas << " sigma");
    CHECK(found >= with_long);
    CHECK(found_without <= without);
    CHECK(elsewhere <= 3);
  }
}

TEST_CASE("long pass: a slow random walk of the level gets no change point from it", "[detect][long]") {
  // 0.05 sigma per commit (detect-sim's drift kind: 0.03-0.1 run sigma), 600 single values: the walk moves
  // 300-point stretches apart by ~1 sigma, yet a random-walk level explains them about as well as a step.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<SeriesPoint> series = walk_series(600, 0.05 * k_sigma, 1000 + seed);
    const std::vector<std::size_t> with = indices(detect_change_points(series, DetectOptions{}));
    const std::vector<std::size_t> without = indices(detect_change_points(series, without_long()));
    CHECK(with == without);
  }
  // Weaker walks (0.03 sigma per commit) are harder to tell from a small step: it adds one on 3 of 20.
  int extra = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<SeriesPoint> series = walk_series(600, 0.03 * k_sigma, 1000 + seed);
    extra += static_cast<int>(detect_change_points(series, DetectOptions{}).size()) -
             static_cast<int>(detect_change_points(series, without_long()).size());
  }
  CHECK(extra >= 0);
  CHECK(extra <= 3);
}

TEST_CASE("long pass: white noise single values give no change point", "[detect][long]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CHECK(detect_change_points(step_series(0.0, 500 + seed), DetectOptions{}).empty());
  }
}

TEST_CASE("long_splits: binary segmentation between change points, each side at least min_side", "[detect][long]") {
  // Unit noise, a 1 sigma step at 200 and a 2 sigma step at 450 of 600; a change point already at 450.
  Noise noise(7);
  std::vector<double> y;
  for (std::size_t t = 0; t < 600; ++t) {
    y.push_back(noise.normal() + (t >= 200 ? 1.0 : 0.0) + (t >= 450 ? 2.0 : 0.0));
  }
  const std::vector<std::size_t> splits = detail::long_splits(y, {450}, 1.0, 16, 3.0 * std::log(600.0));
  REQUIRE(splits.size() == 1);
  CHECK(std::labs(static_cast<long>(splits[0]) - 200) <= 5);
  // Without the change point at 450 both steps are found; a huge penalty finds none.
  CHECK(detail::long_splits(y, {}, 1.0, 16, 3.0 * std::log(600.0)).size() == 2);
  CHECK(detail::long_splits(y, {}, 1.0, 16, 1e6).empty());
}
