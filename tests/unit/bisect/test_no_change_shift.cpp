// A "no change" verdict says how small the change is: the shift's estimate and 95% interval are filled in (bcb: the
// most likely shift; classic: the endpoints'), so that `bisectctl show` can print "within [a, b]" (issue #30).
#include "bisect/engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

using namespace bisectd::bisect;

namespace {

Problem flat_chain(std::size_t n, Method method) {
  Problem p;
  for (std::size_t i = 0; i < n; ++i) {
    p.chain.push_back({"c" + std::to_string(i), 1.0, false, std::nullopt});
  }
  p.settings.method = method;
  p.settings.noise = 0.01;
  p.settings.threshold = 0.05;
  p.settings.runs_per_visit = 3;
  p.settings.verification_pairs = 0;
  return p;
}

// Deterministic gaussian noise (splitmix + Box-Muller): the test never depends on chance.
double noise(std::uint64_t k) {
  auto mix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  double u1 = (static_cast<double>(mix(k) >> 11) + 0.5) / 9007199254740992.0;
  double u2 = (static_cast<double>(mix(k + 7777) >> 11) + 0.5) / 9007199254740992.0;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

// The same level everywhere with 1% noise: nothing changed.
Step drive_flat(Problem& p) {
  std::int64_t seq = 0;
  for (int i = 0; i < 300; ++i) {
    auto step = next_step(p);
    if (step.verdict != Verdict::need_runs) {
      return step;
    }
    REQUIRE_FALSE(step.picks.empty());
    for (const auto& pick : step.picks) {
      for (int r = 0; r < pick.runs; ++r, ++seq) {
        double value = 100.0 * std::exp(0.01 * noise(static_cast<std::uint64_t>(seq)));
        p.samples.push_back({pick.commit, value, "b" + std::to_string(seq), seq, pick.verification});
      }
    }
  }
  FAIL("no verdict within the step limit");
  return {};
}

} // namespace

TEST_CASE("bisect: a no_change verdict carries the shift's interval", "[bisect][no_change]") {
  for (auto method : {Method::bcb, Method::classic}) {
    INFO("method " << to_string(method));
    auto p = flat_chain(8, method);
    auto step = drive_flat(p);
    INFO("verdict " << to_string(step.verdict) << " after " << p.samples.size() << " runs");
    REQUIRE(step.verdict == Verdict::no_change);
    CHECK(step.shift_low < step.shift_high); // 0 and 0 before: nothing to print
    CHECK(step.shift_low <= step.shift);
    CHECK(step.shift <= step.shift_high);
    CHECK(std::abs(step.shift) < p.settings.threshold);
    CHECK_FALSE(step.culprit.has_value());
  }
}
