// Prebuilt commits count as builds of the bisection until they are measured (themselves or through an
// identical build they share samples with).
#include "bisect/prebuild.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

TEST_CASE("bisect::unused_prebuilds counts prebuilt chain commits without samples", "[bisect][prebuild]") {
  bisect::Problem p;
  for (int i = 0; i < 6; ++i) {
    p.chain.push_back({"c" + std::to_string(i), 1.0, false, std::nullopt});
  }
  p.chain[4].same_as = 3; // builds identical to c3: shares its samples
  p.samples.push_back({0, 100.0, "b0", 0, false});
  p.samples.push_back({3, 90.0, "b1", 1, false});
  CHECK(bisect::unused_prebuilds({}, p) == 0);
  CHECK(bisect::unused_prebuilds({"c1", "c2"}, p) == 2);
  CHECK(bisect::unused_prebuilds({"c1", "c3"}, p) == 1);        // c3 was measured: the engine counts it
  CHECK(bisect::unused_prebuilds({"c4"}, p) == 0);              // measured through c3
  CHECK(bisect::unused_prebuilds({"elsewhere", "c5"}, p) == 1); // not on this chain: not this chain's build
}
