// Prebuild candidates: the commits the next BCB round would target under either outcome of the round in
// flight, never built, in-flight, irrelevant or skipped ones, and none once the posterior has settled.
#include "bisect/prebuild.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

using namespace bisectd::bisect;

namespace {

// 101 commits; 4 runs (one boot each) at 0 and 20 read 1000, at 60 and 100 read 900 (-10 %), 1 % noise known:
// the change lies in (20, 60], where the posterior is near uniform (each commit ~1/40).
Problem bracketed() {
  Problem p;
  for (std::size_t i = 0; i <= 100; ++i) {
    p.chain.push_back({"c" + std::to_string(i), 1.0, false, std::nullopt});
  }
  p.settings.noise = 0.01;
  p.settings.noise_runs = 20;
  p.settings.verification_pairs = 0;
  const double wiggle[4] = {1.002, 0.998, 1.001, 0.999};
  std::int64_t seq = 0;
  for (std::size_t c : {0, 20, 60, 100}) {
    for (double w : wiggle) {
      p.samples.push_back({c, (c <= 20 ? 1000.0 : 900.0) * w, "b" + std::to_string(seq), seq, false});
      ++seq;
    }
  }
  return p;
}

bool within(std::size_t v, std::size_t lo, std::size_t hi) { return v >= lo && v <= hi; }

bool has(const std::vector<std::size_t>& v, std::size_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

} // namespace

TEST_CASE("bisect::prebuild targets the quarter points of the bracket while its median is in flight",
          "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.in_flight = {40};
  auto c = prebuild_candidates(p, 2);
  REQUIRE(c.size() == 2);
  std::sort(c.begin(), c.end());
  CHECK(within(c[0], 29, 31)); // median of (20, 40]
  CHECK(within(c[1], 49, 51)); // median of (40, 60]
}

TEST_CASE("bisect::prebuild with nothing in flight uses the K-machine round's interval midpoints",
          "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.idle_machines = 1;
  auto c = prebuild_candidates(p, 4);
  REQUIRE(c.size() == 2);
  std::sort(c.begin(), c.end());
  CHECK(within(c[0], 29, 31));
  CHECK(within(c[1], 49, 51));
}

TEST_CASE("bisect::prebuild orders by the mass of the interval", "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.in_flight = {30}; // (20, 30] holds ~1/4 of the mass, (30, 60] ~3/4
  auto c = prebuild_candidates(p, 2);
  REQUIRE(c.size() == 2);
  CHECK(within(c[0], 44, 46));
  CHECK(within(c[1], 24, 26));
}

TEST_CASE("bisect::prebuild skips built and in-flight commits", "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.in_flight = {40};
  auto all = prebuild_candidates(p, 2);
  REQUIRE(all.size() == 2);
  p.settings.built = {all[0]};
  auto rest = prebuild_candidates(p, 2);
  CHECK(rest == std::vector<std::size_t>{all[1]}); // the built target needs nothing; no substitute either

  // Adjacent commits in flight: the tiny intervals between them have only in-flight commits near their midpoints.
  p.settings.built.clear();
  p.settings.in_flight = {39, 40, 41};
  auto c = prebuild_candidates(p, 8);
  for (std::size_t f : {39, 40, 41}) {
    CHECK_FALSE(has(c, f));
  }
  REQUIRE(c.size() == 2);
  std::sort(c.begin(), c.end());
  CHECK(within(c[0], 28, 31));
  CHECK(within(c[1], 49, 52));
}

TEST_CASE("bisect::prebuild skips irrelevant and skipped commits", "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.in_flight = {40};
  for (std::size_t i = 26; i <= 34; ++i) {
    p.chain[i].skipped = true; // keeps its mass: the target stays near 30 but 26..34 cannot be built
  }
  auto c = prebuild_candidates(p, 2);
  REQUIRE(c.size() == 2);
  std::sort(c.begin(), c.end());
  CHECK((c[0] == 25 || c[0] == 35));
  CHECK(within(c[1], 49, 51));

  p = bracketed();
  p.settings.in_flight = {40};
  for (std::size_t i = 44; i <= 56; ++i) {
    p.chain[i].prior = 0; // irrelevant: no mass, never built
  }
  c = prebuild_candidates(p, 2);
  REQUIRE(c.size() == 2);
  for (std::size_t i : c) {
    CHECK_FALSE(within(i, 44, 56));
  }

  p = bracketed();
  p.settings.in_flight = {40};
  for (std::size_t i = 27; i <= 33; ++i) {
    p.chain[i].same_as = 26; // builds identical to 26: not canonical, never built on their own
  }
  c = prebuild_candidates(p, 2);
  REQUIRE(c.size() == 2);
  for (std::size_t i : c) {
    CHECK_FALSE(within(i, 27, 33));
  }
}

TEST_CASE("bisect::prebuild respects max_count", "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.in_flight = {40};
  CHECK(prebuild_candidates(p, 0).empty());
  auto one = prebuild_candidates(p, 1);
  REQUIRE(one.size() == 1);
  CHECK(one[0] == prebuild_candidates(p, 2)[0]);
}

TEST_CASE("bisect::prebuild is empty once the posterior names the culprit", "[bisect][prebuild]") {
  auto p = bracketed();
  std::int64_t seq = 100;
  for (std::size_t c : {33, 34}) {
    for (int r = 0; r < 6; ++r, ++seq) {
      p.samples.push_back(
        {c, (c == 33 ? 1000.0 : 900.0) * (r % 2 == 0 ? 1.002 : 0.998), "x" + std::to_string(seq), seq, false});
    }
  }
  p.settings.in_flight = {34};
  CHECK(prebuild_candidates(p, 2).empty());

  auto open = bracketed();
  open.settings.method = Method::classic;
  open.settings.in_flight = {40};
  CHECK(prebuild_candidates(open, 2).empty());
}

TEST_CASE("bisect::prebuild stops at the build budget", "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.in_flight = {40};
  p.settings.max_builds = 4; // four builds (0, 20, 60, 100) have samples
  CHECK(prebuild_candidates(p, 2).empty());
}

TEST_CASE("bisect::prebuild waits while earlier prebuilds inside the bracket are unused", "[bisect][prebuild]") {
  auto p = bracketed();
  p.settings.in_flight = {40};
  p.settings.built = {33, 95}; // 33: built, not measured, inside (20, 60]; 95: outside the bracket, dead
  auto one = prebuild_candidates(p, 2);
  CHECK(one.size() == 2);
  CHECK(prebuild_candidates(p, 1).empty()); // one waits already
  p.settings.built = {33, 47};
  CHECK(prebuild_candidates(p, 2).empty());
}
