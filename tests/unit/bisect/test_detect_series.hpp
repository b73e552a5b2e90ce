#pragma once
// Deterministic synthetic series for the detector tests (mt19937_64 is fully specified; Box-Muller is ours).

#include "bisect/detect.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace bisectd::bisect::testing {

class Noise {
public:
  explicit Noise(std::uint64_t seed) : m_engine(seed) {}
  double uniform() { return static_cast<double>(m_engine() >> 11) * 0x1.0p-53; }
  double normal() {
    const double u1 = 1.0 - uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * uniform());
  }

private:
  std::mt19937_64 m_engine;
};

enum class Kind { gaussian, bimodal, outliers };

struct Step {
  std::size_t index;
  double relative;
};

// `commits` points of `runs` runs each around level 1000, relative run sigma `sigma`, relative steps.
inline std::vector<SeriesPoint> make_series(std::size_t commits, std::vector<Step> steps, double sigma,
                                            std::uint64_t seed, Kind kind = Kind::gaussian, int runs = 3,
                                            double commit_sigma = 0.0) {
  Noise noise(seed);
  std::vector<SeriesPoint> out;
  double level = 1000.0;
  for (std::size_t i = 0; i < commits; ++i) {
    for (const Step& s : steps) {
      level *= s.index == i ? 1.0 + s.relative : 1.0;
    }
    const double commit_level = level * (1.0 + commit_sigma * noise.normal());
    SeriesPoint p;
    p.id = "c" + std::to_string(i);
    for (int r = 0; r < runs; ++r) {
      double z = noise.normal();
      if (kind == Kind::bimodal && noise.uniform() < 0.3) {
        z -= 4.0;
      }
      double v = commit_level * (1.0 + sigma * z);
      if (kind == Kind::outliers && noise.uniform() < 0.03) {
        v *= 0.7;
      }
      p.samples.push_back(v);
    }
    out.push_back(std::move(p));
  }
  return out;
}

inline bool near(std::size_t a, std::size_t b, std::size_t margin) {
  return (a > b ? a - b : b - a) <= margin;
}

inline DetectOptions without_lab() {
  DetectOptions o;
  o.lab_model = false;
  return o;
}

} // namespace bisectd::bisect::testing
