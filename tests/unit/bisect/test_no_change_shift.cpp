// A "no change" verdict says how small the change is: the shift's estimate and 95% interval are filled in (bcb: the
// most likely shift; classic: the endpoints'), so that `bisectctl show` can print "within [a, b]" (issue #30).
#include "engine_world.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

using namespace bisectd::bisect;
namespace engine = bisectd::bisect::engine_test;

namespace {

Problem flat_chain(std::size_t n, Method method) {
  auto p = engine::chain_of(n);
  p.settings.method = method;
  p.settings.noise = 0.01;
  p.settings.threshold = 0.05;
  p.settings.runs_per_visit = 3;
  return p;
}

// The same level everywhere with 1% noise: nothing changed.
Step drive_flat(Problem& p) {
  return engine::drive(p, [](std::size_t, std::int64_t seq) {
    return 100.0 * std::exp(0.01 * engine::gaussian(static_cast<std::uint64_t>(seq)));
  });
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
