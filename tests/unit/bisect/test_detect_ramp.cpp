// Step against ramp (bisect/detect_ramp.cpp): a gradual change spread over many commits is not a change point
// (a bisection cannot pin it on one commit); a jump is, also beside or inside a ramp.

#include "bisect/detect.hpp"
#include "bisect/detect_internal.hpp"
#include "test_detect_series.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace bisectd::bisect;
using testing::without_lab;
using testing::Noise;

namespace {

// Unit-sigma noise plus a ramp of `height` from `start` over `length` points and a jump of `jump` at `at`.
std::vector<double> shape(std::size_t n, double height, std::size_t start, std::size_t length, double jump,
                          std::size_t at, std::uint64_t seed) {
  Noise noise(seed);
  std::vector<double> y;
  for (std::size_t t = 0; t < n; ++t) {
    const double u =
      std::clamp((static_cast<double>(t) - static_cast<double>(start)) / static_cast<double>(length), 0.0, 1.0);
    y.push_back(noise.normal() + height * u + (t >= at ? jump : 0.0));
  }
  return y;
}

// `commits` commits of 3 runs (relative sigma `sigma`, level 1000) with a ramp of `relative` over `length`
// commits from `start` and a step of `step` at `at` (0: none).
std::vector<SeriesPoint> ramp_series(std::size_t commits, double relative, std::size_t start, std::size_t length,
                                     double step, std::size_t at, double sigma, std::uint64_t seed) {
  Noise noise(seed);
  std::vector<SeriesPoint> out;
  for (std::size_t i = 0; i < commits; ++i) {
    const double u =
      std::clamp((static_cast<double>(i) - static_cast<double>(start) + 1.0) / static_cast<double>(length), 0.0, 1.0);
    const double level = 1000.0 * (1.0 + relative * u) * (at > 0 && i >= at ? 1.0 + step : 1.0);
    SeriesPoint p;
    p.id = "c" + std::to_string(i);
    for (int r = 0; r < 3; ++r) {
      p.samples.push_back(level * (1.0 + sigma * noise.normal()));
    }
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace

TEST_CASE("ramp test: a step fits better than any ramp, a ramp far better than a step", "[detect][ramp]") {
  double step_advantage = 0, ramp_advantage = 0;
  std::size_t jump_kept = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    step_advantage =
      std::max(step_advantage, detail::ramp_test(shape(100, 0, 0, 1, 4.0, 50, seed), 50, 1.0, 16).advantage);
    const detail::RampTest ramp = detail::ramp_test(shape(100, 8.0, 30, 40, 0, 0, seed), 50, 1.0, 16);
    ramp_advantage += ramp.advantage / 20.0;
    jump_kept += ramp.jump_given_ramp >= 6.0 ? 1 : 0;
  }
  CHECK(step_advantage < 5.0);  // a 4 sigma step: no ramp of 16 or more points comes close
  CHECK(ramp_advantage > 50.0); // 8 sigma over 40 points
  INFO("ramps where a jump still explains >= 6 sigma^2: " << jump_kept);
  CHECK(jump_kept <= 3); // a jump on top of the ramp rarely explains much (the gate's threshold)
}

TEST_CASE("ramp test: a jump inside a ramp still explains much on top of the ramp", "[detect][ramp]") {
  std::size_t seen = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const detail::RampTest t = detail::ramp_test(shape(100, 8.0, 30, 40, 4.0, 50, seed), 50, 1.0, 16);
    seen += t.advantage < 5.0 || t.jump_given_ramp >= 6.0 ? 1 : 0;
  }
  CHECK(seen >= 19);
}

TEST_CASE("lab: a steep ramp is not a change point; a step beside it is", "[detect][ramp]") {
  std::size_t ours = 0, plain = 0, found = 0, other = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    // 8 % over 40 commits at 1 % run sigma: 14 point sigmas, which a plain level detector cuts into steps.
    const std::vector<SeriesPoint> ramp = ramp_series(400, 0.08, 180, 40, 0, 0, 0.01, seed);
    ours += detect_change_points(ramp, DetectOptions{}).size();
    plain += detect_change_points(ramp, without_lab()).size();
    for (const ChangePoint& cp : detect_change_points(ramp_series(400, 0.08, 180, 40, 0.04, 250, 0.01, seed), {})) {
      (cp.index + 3 >= 250 && cp.index <= 253 ? found : other) += 1;
    }
  }
  INFO("ramp alarms: lab model " << ours << ", without " << plain << "; step found " << found << ", other " << other);
  CHECK(ours <= 1);
  CHECK(plain >= 10);
  CHECK(found == 10);
  CHECK(other <= 2); // stray alarms on the steep ramp beside the step
}
