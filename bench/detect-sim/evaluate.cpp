#include "evaluate.hpp"

#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace bisectd::bench {

namespace {

double ratio(std::size_t a, std::size_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); }

std::size_t bucket_of(double effect) {
  std::size_t b = 0;
  while (b + 1 < k_effect_edges.size() && effect >= k_effect_edges[b + 1]) {
    ++b;
  }
  return b;
}

} // namespace

double Score::precision() const { return detections == 0 ? 1.0 : ratio(true_positives, detections); }
double Score::recall() const { return ratio(found, steps); }
double Score::f1() const {
  const double p = precision(), r = recall();
  return p + r == 0.0 ? 0.0 : 2.0 * p * r / (p + r);
}
double Score::false_alarms_per_1000() const { return 1000.0 * ratio(false_positives, commits); }
double Score::null_false_alarms_per_1000() const { return 1000.0 * ratio(null_false_positives, null_commits); }
double Score::big_recall() const { return ratio(big_found, big_steps); }
double Score::run_big_recall() const { return ratio(run_big_found, run_big_steps); }

double relative_sigma_hat(const SimSeries& series) {
  std::vector<double> y;
  y.reserve(series.points.size());
  for (const bisect::SeriesPoint& p : series.points) {
    y.push_back(bisect::median(p.samples));
  }
  return bisect::diff_sigma(y) / std::abs(bisect::median(y));
}

namespace {

struct Matching {
  std::vector<bool> step_hit, detection_hit;
};

// One-to-one matching within the margin, nearest pairs first.
Matching match(const SimSeries& series, const std::vector<std::size_t>& detections) {
  std::vector<std::tuple<long, std::size_t, std::size_t>> pairs; // distance, step, detection
  for (std::size_t s = 0; s < series.steps.size(); ++s) {
    for (std::size_t d = 0; d < detections.size(); ++d) {
      const long dist = std::abs(static_cast<long>(detections[d]) - static_cast<long>(series.steps[s].index));
      if (dist <= k_match_margin) {
        pairs.emplace_back(dist, s, d);
      }
    }
  }
  std::sort(pairs.begin(), pairs.end());
  Matching m{std::vector<bool>(series.steps.size(), false), std::vector<bool>(detections.size(), false)};
  for (const auto& [dist, s, d] : pairs) {
    if (!m.step_hit[s] && !m.detection_hit[d]) {
      m.step_hit[s] = m.detection_hit[d] = true;
    }
  }
  return m;
}

bool near_a_step(const SimSeries& series, std::size_t index, long margin) {
  return std::any_of(series.steps.begin(), series.steps.end(), [&](const TrueStep& step) {
    return std::abs(static_cast<long>(index) - static_cast<long>(step.index)) <= margin;
  });
}

} // namespace

void add_to_score(Score& score, const SimSeries& series, std::vector<std::size_t> detections) {
  const Matching m = match(series, detections);
  for (std::size_t d = 0; d < detections.size(); ++d) {
    score.near_false_positives += !m.detection_hit[d] && near_a_step(series, detections[d], 20) ? 1 : 0;
  }
  const auto hits = static_cast<std::size_t>(std::count(m.step_hit.begin(), m.step_hit.end(), true));
  ++score.series;
  score.commits += series.points.size();
  score.detections += detections.size();
  score.true_positives += hits;
  score.false_positives += detections.size() - hits;
  if (series.steps.empty()) {
    score.null_commits += series.points.size();
    score.null_false_positives += detections.size();
  }
  score.steps += series.steps.size();
  score.found += hits;
  const double sigma = relative_sigma_hat(series);
  for (std::size_t s = 0; s < series.steps.size(); ++s) {
    const double size = std::abs(series.steps[s].relative);
    const double effect = sigma > 0 ? size / sigma : INFINITY;
    const std::size_t b = bucket_of(effect);
    ++score.bucket_steps[b];
    score.bucket_found[b] += m.step_hit[s] ? 1 : 0;
    score.run_big_steps += size >= 3.0 * series.run_sigma ? 1 : 0;
    score.run_big_found += size >= 3.0 * series.run_sigma && m.step_hit[s] ? 1 : 0;
    score.big_steps += effect >= 3.0 ? 1 : 0;
    score.big_found += effect >= 3.0 && m.step_hit[s] ? 1 : 0;
  }
}

} // namespace bisectd::bench
