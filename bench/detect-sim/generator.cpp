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

double student_t3(Rng& rng) {
  // t with 3 degrees of freedom: normal / sqrt(chi2_3 / 3).
  const double a = rng.normal(), b = rng.normal(), c = rng.normal();
  return rng.normal() / std::sqrt((a * a + b * b + c * c) / 3.0);
}

double run_value(NoiseKind kind, Rng& rng, double level, double sigma) {
  double z = rng.normal();
  switch (kind) {
  case NoiseKind::bimodal:
    z -= rng.uniform() < 0.3 ? 4.0 : 0.0; // 30% of runs in a second mode 4 sigma lower
    break;
  case NoiseKind::outliers:
    if (rng.uniform() < 0.03) {
      return level * (1.0 + sigma * z) * 0.7; // 3% of runs lose 30%
    }
    break;
  case NoiseKind::heavy_tails: z = student_t3(rng); break;
  default: break;
  }
  return level * (1.0 + sigma * z);
}

// The lab effects of one series, drawn up front (so that the runs' draws do not shift them).
struct LabPlan {
  std::vector<double> level;          // multiplier of the code level per commit (drift, seasonal, ramp, outage)
  std::vector<double> sigma_factor;   // multiplier of the run sigma per commit (variance step)
  std::vector<int> machine;           // machine per commit (0 = the usual box)
  std::vector<double> machine_offset; // relative offset per machine
};

void plan_drift(Rng& rng, double sigma, LabPlan& plan) {
  const double step = rng.uniform(0.03, 0.10) * sigma;
  double walk = 0;
  for (double& l : plan.level) {
    walk += step * rng.normal();
    l *= 1.0 + walk;
  }
}

void plan_seasonal(Rng& rng, double sigma, LabPlan& plan) {
  const double amplitude = rng.uniform(0.5, 1.5) * sigma, period = rng.uniform(20, 200);
  const double phase = rng.uniform(0, 2 * std::numbers::pi);
  for (std::size_t i = 0; i < plan.level.size(); ++i) {
    plan.level[i] *= 1.0 + amplitude * std::sin(2 * std::numbers::pi * static_cast<double>(i) / period + phase);
  }
}

void plan_ramps(Rng& rng, LabPlan& plan) {
  const int n = static_cast<int>(plan.level.size());
  for (int r = rng.uniform_int(1, 2); r > 0; --r) {
    const int length = rng.uniform_int(30, 100), start = rng.uniform_int(0, std::max(0, n - length));
    const double total = (rng.uniform() < 0.5 ? -1 : 1) * rng.uniform(0.03, 0.10);
    for (int i = start; i < n; ++i) {
      plan.level[static_cast<std::size_t>(i)] *= 1.0 + total * std::min(1.0, (i - start + 1.0) / length);
    }
  }
}

void plan_outages(Rng& rng, LabPlan& plan) {
  const int n = static_cast<int>(plan.level.size());
  for (int b = rng.uniform_int(1, 3); b > 0; --b) {
    const int length = rng.uniform_int(1, 4), start = rng.uniform_int(0, n - length);
    const double loss = rng.uniform(0.2, 0.6);
    for (int i = start; i < start + length; ++i) {
      plan.level[static_cast<std::size_t>(i)] *= 1.0 - loss;
    }
  }
}

void plan_swaps(Rng& rng, LabPlan& plan) {
  const int n = static_cast<int>(plan.level.size());
  plan.machine_offset = {0.0, rng.uniform(0.005, 0.02) * (rng.uniform() < 0.5 ? -1 : 1),
                         rng.uniform(0.005, 0.02) * (rng.uniform() < 0.5 ? -1 : 1)};
  for (int s = rng.uniform_int(1, 4); s > 0; --s) {
    const int length = rng.uniform_int(10, 80), start = rng.uniform_int(0, std::max(0, n - length));
    const int box = rng.uniform_int(1, 2);
    for (int i = start; i < std::min(n, start + length); ++i) {
      plan.machine[static_cast<std::size_t>(i)] = box;
    }
  }
}

LabPlan plan_lab(NoiseKind kind, Rng& rng, int commits, double sigma) {
  const auto n = static_cast<std::size_t>(commits);
  LabPlan plan{std::vector<double>(n, 1.0), std::vector<double>(n, 1.0), std::vector<int>(n, 0), {0.0}};
  switch (kind) {
  case NoiseKind::drift: plan_drift(rng, sigma, plan); break;
  case NoiseKind::seasonal: plan_seasonal(rng, sigma, plan); break;
  case NoiseKind::ramp: plan_ramps(rng, plan); break;
  case NoiseKind::outage: plan_outages(rng, plan); break;
  case NoiseKind::machine_swap: plan_swaps(rng, plan); break;
  case NoiseKind::variance_step: {
    const int at = rng.uniform_int(commits / 4, 3 * commits / 4);
    std::fill(plan.sigma_factor.begin() + at, plan.sigma_factor.end(), 2.5);
    break;
  }
  default: break;
  }
  return plan;
}

} // namespace

std::string_view to_string(NoiseKind kind) {
  switch (kind) {
  case NoiseKind::gaussian: return "gaussian";
  case NoiseKind::bimodal: return "bimodal";
  case NoiseKind::outliers: return "outliers";
  case NoiseKind::heavy_tails: return "heavy_tails";
  case NoiseKind::single_value: return "single_value";
  case NoiseKind::noisy_boots: return "noisy_boots";
  case NoiseKind::drift: return "drift";
  case NoiseKind::machine_swap: return "machine_swap";
  case NoiseKind::seasonal: return "seasonal";
  case NoiseKind::variance_step: return "variance_step";
  case NoiseKind::outage: return "outage";
  case NoiseKind::ramp: return "ramp";
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

int Rng::uniform_int(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }

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
  const LabPlan lab = plan_lab(kind, rng, commits, out.run_sigma);
  const int boots = kind == NoiseKind::noisy_boots ? 2 : 1;
  const int runs = kind == NoiseKind::single_value ? 1 : kind == NoiseKind::noisy_boots ? 2 : options.runs_per_commit;
  double level = 1000.0;
  std::size_t next_step = 0;
  out.points.reserve(static_cast<std::size_t>(commits));
  for (int i = 0; i < commits; ++i) {
    const auto c = static_cast<std::size_t>(i);
    if (next_step < out.steps.size() && out.steps[next_step].index == c) {
      level *= 1.0 + out.steps[next_step++].relative;
    }
    bisect::SeriesPoint point;
    point.id = "c" + std::to_string(i);
    const std::string machine = "box" + std::to_string(lab.machine[c]);
    const double box_level =
      level * lab.level[c] * (1.0 + lab.machine_offset[static_cast<std::size_t>(lab.machine[c])]);
    for (int b = 0; b < boots; ++b) {
      const double boot_level = box_level * (1.0 + options.commit_jitter * rng.normal());
      const bool noisy = kind == NoiseKind::noisy_boots && rng.uniform() < 0.08;
      const double sigma = out.run_sigma * lab.sigma_factor[c] * (noisy ? 6.0 : 1.0);
      for (int r = 0; r < runs; ++r) {
        point.samples.push_back(run_value(kind, rng, boot_level, sigma));
        point.origins.push_back({machine, point.id + "/" + std::to_string(b)});
      }
    }
    out.points.push_back(std::move(point));
  }
  return out;
}

} // namespace bisectd::bench
