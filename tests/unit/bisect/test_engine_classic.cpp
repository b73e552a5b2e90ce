// Classic method: endpoints first, LKP non-overlap verdicts, midpoint order, skip handling, no-change.
#include "bisect/classic.hpp"
#include "bisect/engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace bisectd::bisect;

namespace {

Problem make_problem(std::size_t n, Method method = Method::classic) {
  Problem p;
  for (std::size_t i = 0; i < n; ++i) {
    p.chain.push_back({"c" + std::to_string(i), 1.0, false, std::nullopt});
  }
  p.settings.method = method;
  p.settings.runs_per_visit = 3;
  return p;
}

// Deterministic small noise: +-0.5% around 100 (good) or 90 (bad).
void run(Problem& p, const Pick& pick, std::size_t culprit, std::int64_t& seq) {
  static const double k_jitter[] = {-0.005, 0.0, 0.005, 0.002, -0.003, 0.004};
  for (int r = 0; r < pick.runs; ++r) {
    double base = pick.commit >= culprit ? 90.0 : 100.0;
    double v = base * (1 + k_jitter[(seq + r) % 6]);
    p.samples.push_back({pick.commit, v, "b" + std::to_string(seq), seq, pick.verification});
  }
  ++seq;
}

Step drive(Problem& p, std::size_t culprit, int max_steps = 200) {
  std::int64_t seq = 0;
  for (int i = 0; i < max_steps; ++i) {
    auto step = next_step(p);
    if (step.verdict != Verdict::need_runs) {
      return step;
    }
    REQUIRE_FALSE(step.picks.empty());
    for (const auto& pick : step.picks) {
      run(p, pick, culprit, seq);
    }
  }
  FAIL("no verdict");
  return {};
}

} // namespace

TEST_CASE("bisect::lkp_changed", "[bisect][classic]") {
  CHECK(lkp_changed({1.0, 1.1, 1.2}, {2.0, 2.1, 2.2}, 0.02));
  CHECK(lkp_changed({2.0, 2.1, 2.2}, {1.0, 1.1, 1.2}, 0.02));
  CHECK_FALSE(lkp_changed({1.0, 1.1, 1.2}, {1.05, 1.15, 1.25}, 0.02)); // overlapping ranges
  CHECK_FALSE(lkp_changed({1.0, 1.0, 1.0}, {1.01, 1.01, 1.01}, 0.02)); // separated but below the threshold
}

TEST_CASE("bisect::classic measures endpoints first", "[bisect][classic]") {
  auto p = make_problem(10);
  p.settings.idle_machines = 2;
  auto step = next_step(p);
  REQUIRE(step.verdict == Verdict::need_runs);
  REQUIRE(step.picks.size() == 2);
  CHECK(step.picks[0].commit == 0);
  CHECK(step.picks[1].commit == 9);
  CHECK(step.picks[0].runs == 3);
  p.settings.idle_machines = 1;
  step = next_step(p);
  REQUIRE(step.picks.size() == 1);
  p.settings.in_flight = {0};
  step = next_step(p);
  REQUIRE(step.picks.size() == 1);
  CHECK(step.picks[0].commit == 9);
}

TEST_CASE("bisect::classic finds the culprit", "[bisect][classic]") {
  for (std::size_t culprit : {1u, 5u, 17u, 31u}) {
    auto p = make_problem(32);
    auto step = drive(p, culprit);
    CHECK(step.verdict == Verdict::found);
    REQUIRE(step.culprit);
    CHECK(*step.culprit == culprit);
    CHECK(step.credible_set == std::vector<std::size_t>{culprit});
    CHECK(step.p_culprit > 0.5);
    CHECK(step.p_culprit <= 1.0);
    CHECK(step.shift == Approx(-0.1).margin(0.01));
    CHECK(step.shift_low < step.shift);
    CHECK(step.shift_high > step.shift);
    // 3 runs at each of the 2 endpoints and at 4-5 midpoints (ceil(log2 31)), every run counted.
    std::set<std::size_t> visited;
    for (const auto& s : p.samples) {
      visited.insert(s.commit);
    }
    CHECK(step.runs_used == static_cast<int>(p.samples.size()));
    CHECK(step.runs_used == 3 * static_cast<int>(visited.size()));
    CHECK(visited.size() >= 2 + 4);
    CHECK(visited.size() <= 2 + 5);
  }
}

TEST_CASE("bisect::classic avoids skipped commits and answers a set", "[bisect][classic]") {
  auto p = make_problem(10);
  for (std::size_t i : {4u, 5u, 6u}) {
    p.chain[i].skipped = true;
  }
  auto step = drive(p, 5);
  CHECK(step.verdict == Verdict::ambiguous);
  CHECK(step.credible_set == std::vector<std::size_t>{4, 5, 6, 7});
  for (const auto& s : p.samples) {
    CHECK_FALSE(p.chain[s.commit].skipped);
  }
  CHECK(classic_midpoint(p.chain, 3, 7) == std::nullopt);
  CHECK(classic_midpoint(p.chain, 0, 9) == std::optional<std::size_t>{3});
}

TEST_CASE("bisect::classic reports no change when the endpoints agree", "[bisect][classic]") {
  auto p = make_problem(10);
  auto step = drive(p, 100); // culprit beyond the chain: every commit is good
  CHECK(step.verdict == Verdict::no_change);
  CHECK(step.p_no_change == 1.0);
  CHECK(step.runs_used == 6);
}

TEST_CASE("bisect::classic shares samples of identical builds", "[bisect][classic]") {
  auto p = make_problem(8);
  p.chain[3].same_as = 4;
  auto step = drive(p, 3);
  CHECK(step.verdict == Verdict::found);
  // 3 and 4 are one build: samples taken at either describe both, so the first of them is blamed.
  REQUIRE(step.culprit);
  CHECK(*step.culprit == 3);
  CHECK(step.builds_used <= step.runs_used / 3);
}

TEST_CASE("bisect::next_step rejects invalid problems", "[bisect]") {
  auto p = make_problem(1);
  CHECK(next_step(p).verdict == Verdict::ambiguous);
  p = make_problem(4);
  p.samples.push_back({7, 1.0, "b", 0, false});
  auto step = next_step(p);
  CHECK(step.verdict == Verdict::ambiguous);
  REQUIRE_FALSE(step.trace.empty());
  CHECK(step.trace.back().find("sample.commit") != std::string::npos);
}
