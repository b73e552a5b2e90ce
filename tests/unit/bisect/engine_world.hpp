#pragma once
// What the engine tests share: a chain of commits, deterministic noise, and a loop that answers the engine's picks
// with simulated runs until it gives a verdict.
#include "bisect/engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

namespace bisectd::bisect::engine_test {

// Commits c0..c{n-1}, every prior 1, bcb with a 3 % noise prior and no verification pairs.
inline Problem chain_of(std::size_t n) {
  Problem p;
  for (std::size_t i = 0; i < n; ++i) {
    p.chain.push_back({"c" + std::to_string(i), 1.0, false, std::nullopt});
  }
  p.settings.noise = 0.03;
  p.settings.verification_pairs = 0;
  return p;
}

// Deterministic standard gaussian noise (splitmix + Box-Muller): the tests never depend on chance.
inline double gaussian(std::uint64_t k) {
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

// The value of the run number `seq` (0, 1, ... over the whole bisection) of commit `commit`.
using RunValue = std::function<double(std::size_t commit, std::int64_t seq)>;

// Asks the engine for steps and answers every pick's runs (each run its own boot) until it gives a verdict.
inline Step drive(Problem& p, const RunValue& value, int max_steps = 300) {
  std::int64_t seq = 0;
  for (int i = 0; i < max_steps; ++i) {
    auto step = next_step(p);
    if (step.verdict != Verdict::need_runs) {
      return step;
    }
    REQUIRE_FALSE(step.picks.empty());
    for (const auto& pick : step.picks) {
      for (int r = 0; r < pick.runs; ++r, ++seq) {
        p.samples.push_back(
          {pick.commit, value(pick.commit, seq), "boot" + std::to_string(seq), seq, pick.verification});
      }
    }
  }
  FAIL("no verdict within " << max_steps << " steps");
  return {};
}

} // namespace bisectd::bisect::engine_test
