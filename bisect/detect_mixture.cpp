// Bimodal run noise: some benchmarks land each run in one of two states (a minority of runs a fixed distance
// from the usual level). The median of a few runs then jumps between the modes and hides small shifts; knowing
// the two modes' distance and shares (fitted on the differences between runs of the same boot, which steps and
// drift do not touch), each boot's level is the usual mode's, its minority runs moved back by the distance.

#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::bisect::detail {

namespace {

constexpr std::size_t k_min_pairs = 200;   // pairs of runs of one boot needed to fit the modes
constexpr double k_min_mixed_share = 0.2;  // pairs from two different modes: a minority of >= ~11 % of runs
constexpr double k_min_separation = 2.5;   // mode distance in standard deviations of a difference of runs
constexpr double k_min_lr = 50.0;          // 2 log likelihood ratio of the mixture against one mode
constexpr int k_em_rounds = 100;
constexpr int k_level_rounds = 20;

double normal_density(double x, double variance) { return std::exp(-0.5 * x * x / variance) / std::sqrt(variance); }

// Differences of runs of one boot, relative to the boot's median.
std::vector<double> relative_pair_differences(const std::vector<std::vector<double>>& boots) {
  std::vector<double> out;
  for (const std::vector<double>& runs : boots) {
    const double level = runs.size() >= 2 ? median(runs) : 0.0;
    if (level == 0.0) {
      continue;
    }
    for (std::size_t a = 0; a < runs.size(); ++a) {
      for (std::size_t b = a + 1; b < runs.size(); ++b) {
        out.push_back((runs[a] - runs[b]) / std::abs(level));
      }
    }
  }
  return out;
}

// Sign of the minority mode: the mean of a boot's runs lies towards it from their median.
double minority_sign(const std::vector<std::vector<double>>& boots) {
  double skew = 0;
  for (const std::vector<double>& runs : boots) {
    if (runs.size() >= 2) {
      const double level = median(runs);
      skew += level != 0.0 ? (mean(runs) - level) / std::abs(level) : 0.0;
    }
  }
  return skew < 0.0 ? -1.0 : 1.0;
}

} // namespace

RunMixture fit_run_mixture(const std::vector<std::vector<double>>& boots) {
  RunMixture out;
  const std::vector<double> d = relative_pair_differences(boots);
  if (d.size() < k_min_pairs) {
    return out;
  }
  // EM for d ~ w0 N(0, v) + w1/2 N(g, v) + w1/2 N(-g, v): same-mode pairs at 0, mixed pairs at +-gap.
  std::vector<double> abs_d(d.size());
  std::transform(d.begin(), d.end(), abs_d.begin(), [](double x) { return std::abs(x); });
  double v = std::pow(median(abs_d) / 0.6745, 2), g = quantile(abs_d, 0.9), w1 = 0.3;
  if (v <= 0.0) {
    return out; // quantized runs
  }
  for (int round = 0; round < k_em_rounds; ++round) {
    double sum_mixed = 0, sum_gap = 0, sum_sq = 0;
    for (double x : d) {
      const double p0 = (1 - w1) * normal_density(x, v), pp = w1 / 2 * normal_density(x - g, v),
                   pm = w1 / 2 * normal_density(x + g, v);
      const double total = p0 + pp + pm;
      if (total <= 0.0) {
        continue;
      }
      const double rp = pp / total, rm = pm / total;
      sum_mixed += rp + rm;
      sum_gap += rp * x - rm * x;
      sum_sq += (1 - rp - rm) * x * x + rp * (x - g) * (x - g) + rm * (x + g) * (x + g);
    }
    w1 = std::clamp(sum_mixed / static_cast<double>(d.size()), 1e-6, 0.5);
    g = sum_mixed > 0.0 ? std::abs(sum_gap / sum_mixed) : 0.0;
    v = std::max(sum_sq / static_cast<double>(d.size()), 1e-300);
  }
  // Against a single mode: d ~ N(0, mean square).
  double mixed_ll = 0, single_ll = 0, square = 0;
  for (double x : d) {
    square += x * x;
  }
  square /= static_cast<double>(d.size());
  for (double x : d) {
    mixed_ll += std::log((1 - w1) * normal_density(x, v) + w1 / 2 * (normal_density(x - g, v) + normal_density(x + g, v)));
    single_ll += std::log(normal_density(x, square));
  }
  if (w1 < k_min_mixed_share || g < k_min_separation * std::sqrt(v) || 2.0 * (mixed_ll - single_ll) < k_min_lr) {
    return out;
  }
  out.found = true;
  out.share = (1.0 - std::sqrt(std::max(0.0, 1.0 - 2.0 * w1))) / 2.0; // mixed pairs: 2 share (1 - share)
  out.gap = minority_sign(boots) * g;
  out.sigma = std::sqrt(v / 2.0);
  return out;
}

double mixture_level(std::span<const double> runs, const RunMixture& m) {
  const double typical = median(runs);
  if (!m.found || typical == 0.0) {
    return typical;
  }
  const double scale = std::abs(typical), gap = m.gap * scale, variance = std::pow(m.sigma * scale, 2);
  const auto log_likelihood = [&](double level) {
    double sum = 0;
    for (double x : runs) {
      sum += std::log((1 - m.share) * normal_density(x - level, variance) +
                      m.share * normal_density(x - level - gap, variance) + 1e-300);
    }
    return sum;
  };
  // Start from the best of "this run is in the usual mode" and "this run is in the minority mode".
  double level = typical, best = log_likelihood(typical);
  for (double x : runs) {
    for (double start : {x, x - gap}) {
      const double ll = log_likelihood(start);
      if (ll > best) {
        best = ll, level = start;
      }
    }
  }
  for (int round = 0; round < k_level_rounds; ++round) {
    double sum = 0;
    for (double x : runs) {
      const double usual = (1 - m.share) * normal_density(x - level, variance);
      const double minority = m.share * normal_density(x - level - gap, variance);
      const double r = usual + minority > 0.0 ? minority / (usual + minority) : 0.0;
      sum += x - r * gap;
    }
    level = sum / static_cast<double>(runs.size());
  }
  return level;
}

} // namespace bisectd::bisect::detail
