#include "daemon/run/cost_history.hpp"

#include <catch2/catch.hpp>

using bisectd::daemon::run::CostHistory;

TEST_CASE("CostHistory: defaults until observed, then medians per job", "[daemon]") {
  CostHistory costs;
  bisectd::bisect::CostModel defaults;
  auto fresh = costs.model("kbench");
  CHECK(fresh.build_s == defaults.build_s);
  CHECK(fresh.boot_s == defaults.boot_s);
  CHECK(fresh.run_s == defaults.run_s);

  costs.add_build("kbench", 30);
  costs.add_build("kbench", 900); // a cold build among incremental ones: the median ignores it
  costs.add_build("kbench", 40);
  costs.add_visit("kbench", 3.0, 10.0, 5); // 2 s per run
  auto learned = costs.model("kbench");
  CHECK(learned.build_s == Approx(40));
  CHECK(learned.boot_s == Approx(3.0));
  CHECK(learned.run_s == Approx(2.0));
  CHECK(learned.run_s < learned.boot_s);

  auto other = costs.model("other-job");
  CHECK(other.build_s == defaults.build_s);
}

TEST_CASE("CostHistory: keeps recent observations and never reports a free step", "[daemon]") {
  CostHistory costs;
  for (int i = 0; i < 30; ++i) {
    costs.add_build("j", i < 25 ? 1000.0 : 10.0);
  }
  CHECK(costs.model("j").build_s == Approx(1000)); // 20 kept: 15 slow, 5 fast
  for (int i = 0; i < 20; ++i) {
    costs.add_build("j", 10.0);
  }
  CHECK(costs.model("j").build_s == Approx(10)); // the lab got faster: followed
  costs.add_visit("j", -0.5, 0.0, 3);            // clock noise: negative boot, zero-length runs
  CHECK(costs.model("j").boot_s >= 1.0);
  CHECK(costs.model("j").run_s >= 1.0);
  costs.add_visit("j", 5.0, 5.0, 0); // no runs: ignored
  CHECK(costs.model("j").boot_s == Approx(1.0));
}
