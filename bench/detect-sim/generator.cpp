#include "generator.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

namespace bisectd::bench {

namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Step positions at random, at least min_step_spacing apart and edge_margin from both ends.
std::vector<std::size_t> step_positions(Rng& rng, int commits, const GeneratorOptions& o) {
  std::vector<std::size_t> out;
  if (rng.uniform() < o.no_step_share) {
    return out;
  }
  const int wanted = 1 + rng.uniform_int(0, commits / 200);
  for (int attempt = 0; attempt < 1000 && static_cast<int>(out.size()) < wanted; ++attempt) {
    const auto pos = static_cast<std::size_t>(rng.uniform_int(o.edge_margin, commits - o.edge_margin));
    const bool far = std::all_of(out.begin(), out.end(), [&](std::size_t p) {
      return std::abs(static_cast<long>(p) - static_cast<long>(pos)) >= o.min_step_spacing;
    });
    if (far) {
      out.push_back(pos);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

double run_value(NoiseKind kind, Rng& rng, double level, double sigma) {
  double z = rng.normal();
  switch (kind) {
  case NoiseKind::gaussian:
    break;
  case NoiseKind::bimodal:
    z -= rng.uniform() < 0.3 ? 4.0 : 0.0;  // 30% of runs in a second mode 4 sigma lower
    break;
  case NoiseKind::outliers:
    if (rng.uniform() < 0.03) {
      return level * (1.0 + sigma * z) * 0.7;  // 3% of runs lose 30%
    }
    break;
  }
  return level * (1.0 + sigma * z);
}

} // namespace

std::string_view to_string(NoiseKind kind) {
  switch (kind) {
  case NoiseKind::gaussian:
    return "gaussian";
  case NoiseKind::bimodal:
    return "bimodal";
  case NoiseKind::outliers:
    return "outliers";
  }
  return "?";
}

Rng::Rng(std::uint64_t seed) {
  for (std::uint64_t& s : m_state) {
    s = splitmix64(seed);
  }
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(m_state[1] * 5, 7) * 9;
  const std::uint64_t t = m_state[1] << 17;
  m_state[2] ^= m_state[0];
  m_state[3] ^= m_state[1];
  m_state[1] ^= m_state[2];
  m_state[0] ^= m_state[3];
  m_state[2] ^= t;
  m_state[3] = rotl(m_state[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

int Rng::uniform_int(int lo, int hi) {
  return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
}

double Rng::normal() {
  // Box-Muller; 1 - uniform() keeps the logarithm finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

SimSeries generate_series(NoiseKind kind, std::uint64_t seed, const GeneratorOptions& options) {
  Rng rng(seed);
  SimSeries out;
  const int commits = rng.uniform_int(options.min_commits, options.max_commits);
  out.run_sigma = rng.uniform(options.min_sigma, options.max_sigma);
  for (std::size_t pos : step_positions(rng, commits, options)) {
    const double size = rng.uniform(options.min_step, options.max_step);
    out.steps.push_back(TrueStep{pos, rng.uniform() < 0.5 ? -size : size});
  }
  double level = 1000.0;
  std::size_t next_step = 0;
  out.points.reserve(static_cast<std::size_t>(commits));
  for (int i = 0; i < commits; ++i) {
    if (next_step < out.steps.size() && out.steps[next_step].index == static_cast<std::size_t>(i)) {
      level *= 1.0 + out.steps[next_step++].relative;
    }
    bisect::SeriesPoint point;
    point.id = "c";
    point.id += std::to_string(i);
    const double commit_level = level * (1.0 + options.commit_jitter * rng.normal());
    for (int r = 0; r < options.runs_per_commit; ++r) {
      point.samples.push_back(run_value(kind, rng, commit_level, out.run_sigma));
    }
    out.points.push_back(std::move(point));
  }
  return out;
}

} // namespace bisectd::bench
