// Change-point detection: a multi-scale median scan proposes candidates, then an Otava-style merge drops the
// weakest candidate until every survivor passes the gates (segment size, relative change, k*sigma, rank test),
// with a standardised rank-CUSUM (Pettitt) step relocating each survivor inside its segment.

#include "bisect/detect.hpp"

#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>

namespace bisectd::bisect {

namespace {

using detail::Gate;

constexpr double k_candidate_z = 2.5; // loose: the merge gates decide, the scan only proposes
constexpr int k_relocate_radius = 5;
constexpr double k_range_drop = 6.0; // z^2 drop that bounds the plausible positions of a change

// z-like score of a median difference between y[lo, mid) and y[mid, hi) (median variance ~ pi/2 * sigma^2 / n).
double median_z(std::span<const double> left, std::span<const double> right, double sigma) {
  const double spread =
    sigma * std::sqrt(1.5708 * (1.0 / static_cast<double>(left.size()) + 1.0 / static_cast<double>(right.size())));
  const double diff = std::abs(median(right) - median(left));
  if (spread == 0.0) {
    return diff > 0.0 ? INFINITY : 0.0; // noiseless series: any level change is a candidate
  }
  return diff / spread;
}

// Local maxima of the scan score at one window size, above the candidate threshold.
std::vector<std::size_t> scan_scale(std::span<const double> y, std::size_t window, std::size_t min_segment,
                                    double sigma) {
  const std::size_t n = y.size();
  std::vector<double> score(n, 0.0);
  for (std::size_t i = min_segment; i + min_segment <= n; ++i) {
    const std::size_t lo = i >= window ? i - window : 0;
    const std::size_t hi = std::min(n, i + window);
    score[i] = median_z(y.subspan(lo, i - lo), y.subspan(i, hi - i), sigma);
  }
  std::vector<std::size_t> out;
  const std::size_t radius = std::max<std::size_t>(1, window / 2);
  for (std::size_t i = min_segment; i + min_segment <= n; ++i) {
    if (score[i] < k_candidate_z) {
      continue;
    }
    const std::size_t from = i >= radius ? i - radius : 0;
    const std::size_t to = std::min(n - 1, i + radius);
    bool is_max = true;
    for (std::size_t j = from; j <= to && is_max; ++j) {
      // Ties go to the leftmost position so a plateau yields one candidate.
      is_max = score[j] < score[i] || (score[j] == score[i] && j >= i);
    }
    if (is_max) {
      out.push_back(i);
    }
  }
  return out;
}

// Union of the candidates of every scale; near-duplicates (closer than min_segment) are merged later.
std::vector<std::size_t> candidates(std::span<const double> y, const DetectOptions& options, double sigma) {
  const auto min_seg = static_cast<std::size_t>(options.min_segment);
  const auto max_win = static_cast<std::size_t>(std::max(options.max_window, options.min_segment));
  std::vector<std::size_t> out;
  for (std::size_t window : {min_seg, std::max(min_seg, max_win / 2), max_win}) {
    const std::vector<std::size_t> found = scan_scale(y, window, min_seg, sigma);
    out.insert(out.end(), found.begin(), found.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Index of the change point to drop next (the weakest failing one), or -1 when all pass.
long weakest_failing(const std::vector<Gate>& gates) {
  long worst = -1;
  for (std::size_t j = 0; j < gates.size(); ++j) {
    if (gates[j].pass) {
      continue;
    }
    if (worst < 0) {
      worst = static_cast<long>(j);
      continue;
    }
    const Gate& w = gates[static_cast<std::size_t>(worst)];
    const Gate& g = gates[j];
    if (g.p_value > w.p_value || (g.p_value == w.p_value && g.effect < w.effect)) {
      worst = static_cast<long>(j);
    }
  }
  return worst;
}

Gate gate_at(const detail::PreparedSeries& p, const std::vector<std::size_t>& cps, std::size_t j, double sigma,
             const DetectOptions& options) {
  const std::size_t lo = j == 0 ? 0 : cps[j - 1];
  const std::size_t hi = j + 1 == cps.size() ? p.values.size() : cps[j + 1];
  return detail::evaluate_gate(p, lo, cps[j], hi, sigma, options);
}

// Drops the weakest failing change point until every one passes; returns the survivors' gates.
// Only the two neighbours of a dropped point are re-tested (their segments grew).
std::vector<Gate> merge(const detail::PreparedSeries& y, std::vector<std::size_t>& cps, double sigma,
                        const DetectOptions& options) {
  std::vector<Gate> gates;
  gates.reserve(cps.size());
  for (std::size_t j = 0; j < cps.size(); ++j) {
    gates.push_back(gate_at(y, cps, j, sigma, options));
  }
  for (long worst = weakest_failing(gates); worst >= 0; worst = weakest_failing(gates)) {
    const auto w = static_cast<std::size_t>(worst);
    cps.erase(cps.begin() + worst);
    gates.erase(gates.begin() + worst);
    if (w > 0) {
      gates[w - 1] = gate_at(y, cps, w - 1, sigma, options);
    }
    if (w < cps.size()) {
      gates[w] = gate_at(y, cps, w, sigma, options);
    }
  }
  return gates;
}

// Moves each change point to the best rank-CUSUM split near it, staying inside its neighbours' segments.
bool relocate(std::span<const double> y, std::vector<std::size_t>& cps, const DetectOptions& options) {
  bool moved = false;
  const auto min_seg = static_cast<std::size_t>(options.min_segment);
  const auto window = static_cast<std::size_t>(options.max_window);
  for (std::size_t j = 0; j < cps.size(); ++j) {
    const std::size_t seg_lo = j == 0 ? 0 : cps[j - 1];
    const std::size_t seg_hi = j + 1 == cps.size() ? y.size() : cps[j + 1];
    const std::size_t lo = std::max(seg_lo, cps[j] >= window ? cps[j] - window : 0);
    const std::size_t hi = std::min(seg_hi, cps[j] + window);
    const std::size_t from = std::max(seg_lo + min_seg, cps[j] >= k_relocate_radius ? cps[j] - k_relocate_radius : 0);
    const std::size_t to = std::min(seg_hi >= min_seg ? seg_hi - min_seg : 0, cps[j] + k_relocate_radius);
    const std::size_t best = detail::best_rank_split(y, lo, hi, from, to, cps[j]);
    moved = moved || best != cps[j];
    cps[j] = best;
  }
  return moved;
}

// Plausible positions of change point j, as prepared-series indices.
std::pair<std::size_t, std::size_t> change_range(std::span<const double> y, const std::vector<std::size_t>& cps,
                                                 std::size_t j, const DetectOptions& options) {
  const auto window = static_cast<std::size_t>(options.max_window);
  const std::size_t seg_lo = j == 0 ? 0 : cps[j - 1];
  const std::size_t seg_hi = j + 1 == cps.size() ? y.size() : cps[j + 1];
  const std::size_t lo = std::max(seg_lo, cps[j] >= window ? cps[j] - window : 0);
  const std::size_t hi = std::min(seg_hi, cps[j] + window);
  return detail::rank_split_range(y, lo, hi, lo + 1, hi - 1, k_range_drop);
}

// Share of detections within ±5 commits of the true step, by width of the change range, measured with
// detect-sim (seed 777, 3000 series, 4,350 detections): 1-4 -> .998, 8 -> .991, 12 -> .934, 16 -> .864,
// 24 -> .703, wider -> .636. Linear in between.
double location_reliability(std::size_t width) {
  static constexpr double k_width[] = {4, 8, 12, 16, 24, 32};
  static constexpr double k_share[] = {0.998, 0.991, 0.934, 0.864, 0.703, 0.636};
  const auto w = static_cast<double>(width);
  if (w <= k_width[0]) {
    return k_share[0];
  }
  for (std::size_t i = 1; i < std::size(k_width); ++i) {
    if (w <= k_width[i]) {
      const double f = (w - k_width[i - 1]) / (k_width[i] - k_width[i - 1]);
      return k_share[i - 1] + f * (k_share[i] - k_share[i - 1]);
    }
  }
  return k_share[std::size(k_share) - 1];
}

double fallback_sigma(std::span<const double> y) {
  double sigma = diff_sigma(y);
  if (sigma > 0.0 || y.size() < 2) {
    return sigma;
  }
  // Quantized metrics: most successive differences are 0, so use the mean absolute difference instead.
  double sum = 0.0;
  for (std::size_t i = 1; i < y.size(); ++i) {
    sum += std::abs(y[i] - y[i - 1]);
  }
  return sum / static_cast<double>(y.size() - 1) * std::sqrt(std::numbers::pi / 2.0) / std::sqrt(2.0);
}

// Candidates, merge and relocation: the surviving change points (prepared indices) and their gates.
std::vector<Gate> find(const detail::PreparedSeries& p, double sigma, const DetectOptions& options,
                       std::vector<std::size_t>& cps) {
  const std::span<const double> y = p.values;
  cps = candidates(y, options, sigma);
  std::vector<Gate> gates = merge(p, cps, sigma, options);
  for (int round = 0; round < 3 && relocate(y, cps, options); ++round) {
    gates = merge(p, cps, sigma, options);
  }
  return gates;
}

constexpr double k_lenient_abrupt_z = 0.5;
constexpr double k_strict_abrupt_z = 2.5;
constexpr int k_drift_window = 25;
constexpr double k_drift_ratio = 1.3;        // calibrated with detect-sim (drift vs gaussian kinds)
constexpr double k_strong_drift_ratio = 1.6; // on the strict pass's residuals (detect-sim and unit tests)
constexpr double k_level_lr = 10.0;          // a random walk against a constant level (detect-sim trials)
constexpr int k_periodic_rounds = 2;         // refit the cycle once from the change points found without it

// Removes the periodic load component of the residuals from the change points `cps`, if there is one.
bool remove_periodic(detail::PreparedSeries& p, const std::vector<std::size_t>& cps, double sigma,
                     const DetectOptions& options) {
  const auto min_period = static_cast<std::size_t>(2 * options.min_segment);
  const std::vector<double> cycle = detail::periodic_component(p.values, cps, sigma, min_period);
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    p.values[i] -= cycle[i];
    for (detail::MachineValue& v : p.by_machine[i]) {
      v.value -= cycle[i];
    }
  }
  return !cycle.empty();
}

// The lab level model. First with short windows and strict abruptness, and a periodic load component removed
// if the residuals from those change points show one. Then with the requested windows and lenient
// abruptness; if the residuals from those change points still wander (slow drift, ramps), again strictly,
// with the level's random-walk variance added to the window gate's noise; if they wander too little for the
// variogram but the local-level likelihood still finds a random walk, leniently with its variance added.
std::vector<Gate> find_with_level(detail::PreparedSeries& model, double& sigma, DetectOptions& options,
                                  std::vector<std::size_t>& cps) {
  DetectOptions strict = options;
  strict.abrupt_z = k_strict_abrupt_z;
  strict.max_window = std::max(options.min_segment, std::min(options.max_window, k_drift_window));
  (void)find(model, sigma, strict, cps);
  for (int round = 0; round < k_periodic_rounds && remove_periodic(model, cps, sigma, options); ++round) {
    sigma = fallback_sigma(model.values);
    (void)find(model, sigma, strict, cps);
  }
  // A strong drift is already plain from the strict change points: the lenient ones would follow it with a
  // staircase whose residuals no longer wander.
  const double strong = detail::wander_variance(model.values, cps, k_strong_drift_ratio);
  options.abrupt_z = k_lenient_abrupt_z;
  std::vector<Gate> gates = find(model, sigma, options, cps);
  model.wander = detail::wander_variance(model.values, cps, k_drift_ratio);
  if (model.wander == 0.0) {
    model.wander = strong;
  }
  if (model.wander > 0.0) {
    options = strict;
    return find(model, sigma, options, cps);
  }
  // A weaker wander the variogram cannot tell from noise: the local-level model's likelihood can. The lenient
  // pass is run again with that random walk's effect on the window medians added to their noise.
  model.wander = detail::local_level_wander(model.values, cps, sigma, k_level_lr);
  if (model.wander > 0.0) {
    gates = find(model, sigma, options, cps);
  } else if (options.long_segments) {
    // A steady level: small steps between long stable stretches show over the whole stretches.
    detail::add_long_changes(model, sigma, options, cps, gates);
  }
  return gates;
}

} // namespace

std::vector<ChangePoint> detect_change_points(const std::vector<SeriesPoint>& series, const DetectOptions& requested) {
  DetectOptions options = requested;
  options.max_window = std::max(options.max_window, options.min_segment);
  const detail::PreparedSeries prepared = detail::prepare(series, options.lab_model);
  const std::span<const double> y = prepared.values;
  if (options.min_segment < 1 || y.size() < 2 * static_cast<std::size_t>(options.min_segment)) {
    return {};
  }
  double sigma = fallback_sigma(y);
  detail::PreparedSeries model = prepared; // the level model may remove a periodic component
  std::vector<std::size_t> cps;
  std::vector<Gate> gates = options.lab_model && options.abrupt_z < 0 ? find_with_level(model, sigma, options, cps)
                                                                      : find(model, sigma, options, cps);
  const double tests = std::max(1.0, static_cast<double>(y.size()) / options.min_segment);
  std::vector<ChangePoint> out;
  for (std::size_t j = 0; j < cps.size(); ++j) {
    const Gate& g = gates[j];
    const std::size_t index = prepared.origin[cps[j]];
    ChangePoint cp;
    cp.index = index;
    cp.id = series[index].id;
    cp.direction = g.after >= g.before ? ShiftDirection::up : ShiftDirection::down;
    cp.relative_change = g.relative_change;
    cp.p_value = g.p_value;
    cp.before = g.before;
    cp.after = g.after;
    cp.sigma = sigma;
    cp.machines = g.machines;
    const auto [first, last] = change_range(model.values, cps, j, options);
    cp.range_begin = prepared.origin[std::min(first, cps[j])];
    cp.range_end = prepared.origin[std::max(last, cps[j])];
    // P(real): Sidak over the series' effective number of independent split tests (length / min_segment);
    // times P(located within ±5 | range width), measured.
    const double real = std::pow(1.0 - std::min(1.0, g.p_value), tests);
    cp.confidence = real * location_reliability(std::max(last, cps[j]) - std::min(first, cps[j]) + 1);
    out.push_back(std::move(cp));
  }
  return out;
}

} // namespace bisectd::bisect
