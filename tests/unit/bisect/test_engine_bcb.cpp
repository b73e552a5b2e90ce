// BCB steps: endpoints first, K distinct picks in synchronous rounds, skipped commits never picked and the set
// answer, the stop rule with verification pairs, and a seeded simulation that finds the culprit.
#include "engine_world.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>

using namespace bisectd::bisect;
namespace engine = bisectd::bisect::engine_test;

namespace {

// Runs the engine against a world with a 6.5 % drop at `culprit` and 3 % noise; returns the final step.
Step simulate(Problem& p, std::size_t culprit, std::uint64_t seed, int max_steps = 300) {
  return engine::drive(
    p,
    [&](std::size_t commit, std::int64_t seq) {
      double shift = commit >= culprit ? -0.065 : 0.0;
      return 1000 * std::exp(shift + 0.03 * engine::gaussian(seed * 100003 + static_cast<std::uint64_t>(seq)));
    },
    max_steps);
}

// One run per boot at each of `commits` (indices): 1000 at the good end (index 0), 935 (-6.5 %) elsewhere.
void add_endpoint_runs(Problem& p, std::initializer_list<std::size_t> commits) {
  std::int64_t seq = static_cast<std::int64_t>(p.samples.size());
  for (std::size_t c : commits) {
    p.samples.push_back({c, c == 0 ? 1000.0 : 935.0, "b" + std::to_string(seq), seq, false});
    ++seq;
  }
}

} // namespace

TEST_CASE("bisect::bcb measures both endpoints first", "[bisect][bcb]") {
  auto p = engine::chain_of(50);
  p.settings.idle_machines = 4;
  auto step = next_step(p);
  REQUIRE(step.verdict == Verdict::need_runs);
  REQUIRE(step.picks.size() == 2);
  CHECK(step.picks[0].commit == 0);
  CHECK(step.picks[1].commit == 49);
}

TEST_CASE("bisect::bcb K picks are distinct and nothing new is handed out while a round runs", "[bisect][bcb]") {
  auto p = engine::chain_of(200);
  add_endpoint_runs(p, {0u, 0u, 199u, 199u});
  p.settings.idle_machines = 4;
  auto step = next_step(p);
  REQUIRE(step.verdict == Verdict::need_runs);
  REQUIRE(step.picks.size() == 4);
  std::set<std::size_t> commits;
  for (const auto& pick : step.picks) {
    commits.insert(pick.commit);
    CHECK(pick.runs >= 1);
  }
  CHECK(commits.size() == 4);
  // Spread over the range like posterior quantiles, not bunched together.
  CHECK(*commits.rbegin() - *commits.begin() > 60);

  // Rounds are synchronous: while part of the round runs, nothing new is handed out.
  p.settings.in_flight = {*commits.begin()};
  p.settings.idle_machines = 3;
  auto again = next_step(p);
  CHECK(again.verdict == Verdict::need_runs);
  CHECK(again.picks.empty());
}

TEST_CASE("bisect::bcb with K machines gives every pick a visit's worth of runs", "[bisect][bcb]") {
  auto p = engine::chain_of(1000);
  add_endpoint_runs(p, {0u, 0u, 0u, 999u, 999u, 999u});
  p.settings.runs_per_visit = 3;
  p.settings.idle_machines = 4;
  auto step = next_step(p);
  REQUIRE(step.picks.size() == 4);
  for (const auto& pick : step.picks) {
    CHECK(pick.runs >= 3); // a round is the clock: each of the K answers should be nearly certain
  }
  p.settings.idle_machines = 1;
  auto lone = next_step(p);
  REQUIRE(lone.picks.size() == 1);
  CHECK(lone.picks[0].runs == 1);
}

TEST_CASE("bisect::bcb never picks skipped commits and answers a set", "[bisect][bcb]") {
  auto p = engine::chain_of(12);
  for (std::size_t i : {5u, 6u, 7u}) {
    p.chain[i].skipped = true;
  }
  auto step = simulate(p, 6, 11);
  for (const auto& s : p.samples) {
    CHECK_FALSE(p.chain[s.commit].skipped);
  }
  REQUIRE(step.verdict == Verdict::ambiguous);
  CHECK(step.credible_set == std::vector<std::size_t>{5, 6, 7, 8});
  // The skipped commits keep their share of the mass.
  for (std::size_t i : {5u, 6u, 7u}) {
    CHECK(step.posterior[i] > 0.15);
  }
}

TEST_CASE("bisect::bcb stops at 1 - delta and verifies with interleaved pairs", "[bisect][bcb]") {
  auto p = engine::chain_of(40);
  auto plain = simulate(p, 23, 5);
  REQUIRE(plain.verdict == Verdict::found);
  CHECK(plain.culprit == std::optional<std::size_t>{23});
  CHECK(plain.p_culprit >= 0.99);
  CHECK(plain.shift_low < -0.03);
  CHECK(plain.shift_high > -0.10);
  CHECK(plain.shift_low < plain.shift);
  CHECK(plain.shift < plain.shift_high);

  auto q = engine::chain_of(40);
  q.settings.verification_pairs = 4;
  auto verified = simulate(q, 23, 5);
  REQUIRE(verified.verdict == Verdict::found);
  CHECK(verified.culprit == std::optional<std::size_t>{23});
  int at_parent = 0, at_culprit = 0;
  for (const auto& s : q.samples) {
    if (s.verification) {
      at_parent += s.commit == 22 ? 1 : 0;
      at_culprit += s.commit == 23 ? 1 : 0;
      CHECK((s.commit == 22 || s.commit == 23));
    }
  }
  CHECK(at_parent >= 4);
  CHECK(at_culprit >= 4);
  CHECK(verified.runs_used == static_cast<int>(q.samples.size()));
}

TEST_CASE("bisect::bcb budget exhaustion reports the credible set", "[bisect][bcb]") {
  auto p = engine::chain_of(300);
  p.settings.max_runs = 6;
  auto step = simulate(p, 150, 3);
  CHECK(step.verdict == Verdict::budget_exhausted);
  CHECK(step.runs_used >= 6);
  CHECK(step.credible_set.size() > 1);
}

TEST_CASE("bisect::bcb seeded simulations find the culprit", "[bisect][bcb]") {
  int correct = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    auto p = engine::chain_of(101);
    std::size_t culprit = 1 + (seed * 37) % 100;
    auto step = simulate(p, culprit, seed);
    correct += step.verdict == Verdict::found && step.culprit == culprit ? 1 : 0;
    CHECK(step.runs_used < 120);
  }
  CHECK(correct >= 9); // P >= 0.99 claims; 10 seeded runs, one miss tolerated
}

TEST_CASE("bisect::bcb irrelevant commits are never run", "[bisect][bcb]") {
  auto p = engine::chain_of(60);
  for (std::size_t i = 1; i < 59; ++i) {
    p.chain[i].prior = i % 3 == 0 ? 1.0 : 0.0;
  }
  auto step = simulate(p, 30, 4);
  for (const auto& s : p.samples) {
    CHECK((s.commit == 0 || s.commit == 59 || s.commit % 3 == 0));
  }
  CHECK(step.verdict == Verdict::found);
  CHECK(step.culprit == std::optional<std::size_t>{30});
}

TEST_CASE("bisect::bcb works without a noise prior from history", "[bisect][bcb]") {
  int correct = 0;
  for (std::uint64_t seed = 21; seed <= 25; ++seed) {
    auto p = engine::chain_of(31);
    p.settings.noise.reset();
    std::size_t culprit = 1 + (seed * 13) % 30;
    auto step = simulate(p, culprit, seed);
    correct += step.verdict == Verdict::found && step.culprit == culprit ? 1 : 0;
  }
  CHECK(correct >= 4);
}

TEST_CASE("bisect::bcb asks a lone machine for one run at a time", "[bisect][bcb]") {
  auto p = engine::chain_of(200);
  add_endpoint_runs(p, {0u, 0u, 199u, 199u});
  p.settings.cost = {600, 180, 300}; // a build is expensive: several runs per new build would pay up front
  p.settings.runs_per_visit = 3;
  p.settings.idle_machines = 1;
  auto seq = static_cast<std::int64_t>(p.samples.size());
  for (int i = 0; i < 12; ++i) {
    auto step = next_step(p);
    REQUIRE(step.verdict == Verdict::need_runs);
    REQUIRE(step.picks.size() == 1);
    CHECK(step.picks[0].runs == 1); // the kernel stays installed: the next run is decided after this one
    std::size_t c = step.picks[0].commit;
    double v =
      1000 * std::exp((c >= 120 ? -0.065 : 0.0) + 0.03 * engine::gaussian(static_cast<std::uint64_t>(seq) + 4242));
    p.samples.push_back({c, v, "b" + std::to_string(seq), seq, false});
    ++seq;
  }
}

TEST_CASE("bisect::bcb charges a new build's time only when nothing prebuilds it", "[bisect][bcb]") {
  // One good run at commit 60, still installed; the posterior's middle lies near 130, not built. A rerun at 60
  // costs run_s; the middle costs a boot and a run, plus a (huge) build unless a build slot prebuilds it.
  auto p = engine::chain_of(200);
  add_endpoint_runs(p, {0u, 0u, 199u, 199u});
  p.samples.push_back({60, 1000.0, "b60", 10, false});
  p.settings.installed = {60};
  p.settings.cost = {1e6, 180, 300};
  p.settings.prebuild = true;
  auto prebuilt = next_step(p);
  REQUIRE(prebuilt.picks.size() == 1);
  CHECK(prebuilt.picks[0].commit > 100);
  CHECK(prebuilt.picks[0].commit < 170);
  p.settings.prebuild = false;
  auto charged = next_step(p);
  REQUIRE(charged.picks.size() == 1);
  CHECK(charged.picks[0].commit == 60);
}

TEST_CASE("bisect::bcb replicates a single run at the boundary before naming the culprit", "[bisect][bcb]") {
  // A 20 % drop at commit 5, every other commit measured twice, 4 and 5 once: the posterior is sure, but one
  // outlier run could have placed the step there, so each side of the boundary gets a second run first.
  auto p = engine::chain_of(10);
  std::int64_t seq = 0;
  auto add = [&](std::size_t c, double v) {
    p.samples.push_back({c, v, "b" + std::to_string(seq), seq, false});
    ++seq;
  };
  for (std::size_t c : {0u, 1u, 2u, 3u, 6u, 7u, 8u, 9u}) {
    double level = c < 5 ? 1000.0 : 800.0;
    add(c, level * 1.01);
    add(c, level * 0.99);
  }
  add(4, 1000.0);
  add(5, 800.0);
  auto step = next_step(p);
  REQUIRE(step.verdict == Verdict::need_runs);
  REQUIRE(step.culprit == 5u);
  CHECK(step.p_culprit >= 0.99);
  REQUIRE_FALSE(step.picks.empty());
  CHECK((step.picks[0].commit == 4 || step.picks[0].commit == 5));
  CHECK(step.picks[0].runs == 1);
  CHECK(step.picks[0].fresh_boot);
  add(4, 1002.0);
  add(5, 798.0);
  auto done = next_step(p);
  CHECK(done.verdict == Verdict::found);
  CHECK(done.culprit == 5u);
}

TEST_CASE("bisect::bcb wants the boundary pair on two boots: runs of one boot share its offset", "[bisect][bcb]") {
  auto p = engine::chain_of(10);
  std::int64_t seq = 0;
  auto add = [&](std::size_t c, double v, const std::string& boot) { p.samples.push_back({c, v, boot, seq++, false}); };
  for (std::size_t c : {0u, 1u, 2u, 3u, 6u, 7u, 8u, 9u}) {
    double level = c < 5 ? 1000.0 : 800.0;
    add(c, level * 1.01, "a" + std::to_string(c));
    add(c, level * 0.99, "b" + std::to_string(c));
  }
  for (double w : {1.0, 1.002}) { // two runs each at 4 and 5, but of one boot
    add(4, 1000.0 * w, "only4");
    add(5, 800.0 * w, "only5");
  }
  auto step = next_step(p);
  REQUIRE(step.verdict == Verdict::need_runs);
  REQUIRE_FALSE(step.picks.empty());
  CHECK((step.picks[0].commit == 4 || step.picks[0].commit == 5));
  CHECK(step.picks[0].fresh_boot);
  add(4, 998.0, "again4");
  add(5, 801.0, "again5");
  CHECK(next_step(p).verdict == Verdict::found);
}

TEST_CASE("bisect::bcb counts a run in flight on an identical build as in flight for its whole build",
          "[bisect][bcb]") {
  // Commits 0..4 build identically (4 shares 0's samples), as do 5..9: the boundary is 4|5 and verification runs
  // go to the builds' first commits. A verification run queued on commit 4 before its build was known to equal
  // 0's is still in flight once it is: picking 0 again meanwhile would measure the parent twice.
  auto p = engine::chain_of(10);
  p.settings.verification_pairs = 3;
  for (std::size_t c = 1; c < 10; ++c) {
    p.chain[c].same_as = c < 5 ? 0u : 5u;
  }
  p.chain[5].same_as.reset();
  std::int64_t seq = 0;
  auto add = [&](std::size_t c, double v, bool verification) {
    p.samples.push_back({c, v, "b" + std::to_string(seq), seq, verification});
    ++seq;
  };
  for (int r = 0; r < 2; ++r) {
    add(0, 1000.0 + r, false);
    add(5, 800.0 + r, false);
  }
  add(4, 1001.0, true);
  add(5, 799.0, true);
  auto step = next_step(p);
  REQUIRE(step.verdict == Verdict::need_runs);
  REQUIRE(step.picks.size() == 1);
  CHECK(step.picks[0].commit == 0u); // the parent's build, by its first commit
  CHECK(step.picks[0].verification);

  p.settings.in_flight = {4}; // queued on commit 4, the same build as 0
  auto waiting = next_step(p);
  CHECK(waiting.verdict == Verdict::need_runs);
  for (const auto& pick : waiting.picks) {
    CHECK(pick.commit != 0u);
  }
}

TEST_CASE("bisect::bcb names the culprit of a deterministic benchmark", "[bisect][bcb]") {
  // A benchmark without noise (every run of a build reads the same): no spread to estimate, the step is plain.
  for (bool prior : {true, false}) {
    for (int pairs : {0, 5}) {
      auto p = engine::chain_of(40);
      if (!prior) {
        p.settings.noise.reset();
      }
      p.settings.verification_pairs = pairs;
      auto step = engine::drive(p, [](std::size_t commit, std::int64_t) { return commit >= 17 ? 900.0 : 1000.0; });
      INFO("noise prior " << prior << ", verification pairs " << pairs);
      for (const auto& line : step.trace) {
        INFO(line);
      }
      CHECK(step.verdict == Verdict::found);
      CHECK(step.culprit == std::optional<std::size_t>{17});
    }
  }
}
