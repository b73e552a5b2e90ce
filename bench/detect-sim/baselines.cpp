#include "baselines.hpp"

#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::bench {

namespace {

std::vector<double> point_medians(const std::vector<bisect::SeriesPoint>& series) {
  std::vector<double> out;
  out.reserve(series.size());
  for (const bisect::SeriesPoint& p : series) {
    out.push_back(bisect::median(p.samples));
  }
  return out;
}

struct WindowStats {
  double weighted_mean = 0, plain_mean = 0, variance = 0;
  std::size_t n = 0;
};

// Perfherder analyze(): weighted average with linear weights (nearest commit weight 1), variance of all
// values around that weighted average (n - 1).
WindowStats analyze(const std::vector<const bisect::SeriesPoint*>& window) {
  WindowStats s;
  double weighted = 0, weights = 0, plain = 0;
  const auto count = static_cast<double>(window.size());
  for (std::size_t i = 0; i < window.size(); ++i) {
    const double w = (count - static_cast<double>(i)) / count;
    for (double v : window[i]->samples) {
      weighted += v * w;
      weights += w;
      plain += v;
      ++s.n;
    }
  }
  if (s.n == 0) {
    return s;
  }
  s.weighted_mean = weighted / weights;
  s.plain_mean = plain / static_cast<double>(s.n);
  double sum_sq = 0;
  for (const bisect::SeriesPoint* p : window) {
    for (double v : p->samples) {
      sum_sq += (v - s.weighted_mean) * (v - s.weighted_mean);
    }
  }
  s.variance = s.n > 1 ? sum_sq / static_cast<double>(s.n - 1) : 0.0;
  return s;
}

struct PerfherderPoint {
  double t = 0;
  std::size_t prev_values = 0, next_values = 0;
  double change = 0; // relative change of the plain means
};

PerfherderPoint perfherder_at(const std::vector<bisect::SeriesPoint>& series, std::size_t i,
                              std::size_t last_seen_regression) {
  constexpr std::size_t k_min_back = 12, k_max_back = 24, k_fore = 12;
  PerfherderPoint p;
  std::vector<const bisect::SeriesPoint*> back, fore; // back is nearest first
  const std::size_t back_commits = std::min(std::max(last_seen_regression, k_min_back), k_max_back);
  for (std::size_t j = i; j-- > 0 && p.prev_values < k_max_back && i - j <= back_commits;) {
    back.push_back(&series[j]);
    p.prev_values += series[j].samples.size();
  }
  for (std::size_t j = i; j < series.size() && p.next_values < k_fore; ++j) {
    fore.push_back(&series[j]);
    p.next_values += series[j].samples.size();
  }
  const WindowStats s1 = analyze(back), s2 = analyze(fore);
  if (s1.n == 0 || s2.n == 0) {
    return p;
  }
  const double delta = s2.weighted_mean - s1.weighted_mean;
  const double se = std::sqrt(s1.variance / static_cast<double>(s1.n) + s2.variance / static_cast<double>(s2.n));
  p.t = delta == 0 ? 0.0 : (se == 0 ? INFINITY : std::abs(delta / se));
  p.change = s1.plain_mean != 0 ? (s2.plain_mean - s1.plain_mean) / std::abs(s1.plain_mean) : 0.0;
  return p;
}

// Per-commit medians, z-scored (as R's scale()), with the input index of each.
struct Scaled {
  std::vector<double> y;
  std::vector<std::size_t> index;
};

Scaled scaled_medians(const std::vector<bisect::SeriesPoint>& series) {
  Scaled s;
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::vector<double> finite;
    for (double v : series[i].samples) {
      if (std::isfinite(v)) {
        finite.push_back(v);
      }
    }
    if (!finite.empty()) {
      s.y.push_back(bisect::median(finite));
      s.index.push_back(i);
    }
  }
  const double m = bisect::mean(s.y), sd = bisect::stddev(s.y);
  for (double& v : s.y) {
    v = sd > 0 ? (v - m) / sd : 0.0;
  }
  return s;
}

// Prefix sums for the MBIC mean cost of y[a, b): sum x^2 - (sum x)^2 / n + log n (changepoint's mbic_mean).
class MeanCost {
public:
  explicit MeanCost(const std::vector<double>& y) : m_sum(y.size() + 1, 0.0), m_sq(y.size() + 1, 0.0) {
    for (std::size_t i = 0; i < y.size(); ++i) {
      m_sum[i + 1] = m_sum[i] + y[i];
      m_sq[i + 1] = m_sq[i] + y[i] * y[i];
    }
  }
  double operator()(std::size_t a, std::size_t b) const {
    const double n = static_cast<double>(b - a), x = m_sum[b] - m_sum[a];
    return m_sq[b] - m_sq[a] - x * x / n + std::log(n);
  }

private:
  std::vector<double> m_sum, m_sq;
};

// changepoint's binseg() (minseglen 1): each round splits where the gain over all current segments is largest;
// a split at 1-based j (last point of its left segment) is kept while twice its gain >= the penalty.
std::vector<std::size_t> binseg_splits(const std::vector<double>& y, int max_cps) {
  const std::size_t n = y.size();
  if (n < 5) {
    return {};
  }
  const MeanCost cost(y);
  const double pen = 3.0 * std::log(static_cast<double>(n));
  std::vector<std::size_t> tau = {0, n}, found;
  std::vector<double> gains;
  double old_max = 1.7e308;
  for (int q = 0; q < max_cps; ++q) {
    std::vector<double> lambda(n + 1, 0.0);
    std::size_t i = 1, st = 1, end = tau[1];
    double null = -0.5 * cost(st - 1, end);
    for (std::size_t j = 2; j + 2 < n; ++j) {
      if (j == end) {
        st = end + 1;
        end = tau[++i];
        null = -0.5 * cost(st - 1, end);
      } else if (j - st >= 1 && end - j >= 1) {
        lambda[j] = -0.5 * cost(st - 1, j) - 0.5 * cost(j, end) - null;
      }
    }
    const auto best = static_cast<std::size_t>(std::max_element(lambda.begin(), lambda.begin() + static_cast<long>(n)) -
                                               lambda.begin());
    old_max = std::min(old_max, lambda[best]);
    found.push_back(best);
    gains.push_back(old_max);
    tau.insert(std::upper_bound(tau.begin(), tau.end(), best), best);
  }
  std::vector<std::size_t> out;
  for (std::size_t q = 0; q < found.size() && 2.0 * gains[q] >= pen; ++q) {
    out.push_back(found[q]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// changepoint's PELT with the MBIC cost (minseglen 1): last points (1-based) of every segment but the last.
std::vector<std::size_t> pelt_splits(const std::vector<double>& y) {
  const std::size_t n = y.size();
  if (n < 2) {
    return {};
  }
  const MeanCost cost(y);
  const double pen = 3.0 * std::log(static_cast<double>(n));
  std::vector<double> f(n + 1, 0.0);
  std::vector<std::size_t> last(n + 1, 0), alive = {0};
  f[0] = -pen;
  for (std::size_t t = 1; t <= n; ++t) {
    std::vector<double> value(alive.size());
    double best = INFINITY;
    for (std::size_t k = 0; k < alive.size(); ++k) {
      value[k] = f[alive[k]] + cost(alive[k], t) + pen;
      if (value[k] < best) {
        best = value[k];
        last[t] = alive[k];
      }
    }
    f[t] = best;
    std::vector<std::size_t> kept;
    for (std::size_t k = 0; k < alive.size(); ++k) {
      if (value[k] - pen <= best) {
        kept.push_back(alive[k]);
      }
    }
    kept.push_back(t);
    alive = std::move(kept);
  }
  std::vector<std::size_t> out;
  for (std::size_t t = last[n]; t > 0; t = last[t]) {
    out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// 1-based last points of left segments -> input index of the first point after each change.
std::vector<std::size_t> to_input(const Scaled& s, const std::vector<std::size_t>& splits) {
  std::vector<std::size_t> out;
  for (std::size_t j : splits) {
    out.push_back(s.index[j]);
  }
  return out;
}

} // namespace

std::vector<std::size_t> binseg_rule(const std::vector<bisect::SeriesPoint>& series) {
  const Scaled s = scaled_medians(series);
  return to_input(s, binseg_splits(s.y, 5));
}

std::vector<std::size_t> pelt_rule(const std::vector<bisect::SeriesPoint>& series) {
  const Scaled s = scaled_medians(series);
  return to_input(s, pelt_splits(s.y));
}

std::vector<std::size_t> fixed_threshold_rule(const std::vector<bisect::SeriesPoint>& series, double threshold) {
  constexpr std::size_t k_window = 5;
  const std::vector<double> y = point_medians(series);
  std::vector<double> ratio(y.size(), 0.0);
  for (std::size_t i = k_window; i + k_window <= y.size(); ++i) {
    const double before = bisect::median(std::span<const double>(y).subspan(i - k_window, k_window));
    const double after = bisect::median(std::span<const double>(y).subspan(i, k_window));
    ratio[i] = before != 0 ? std::abs(after / before - 1.0) : 0.0;
  }
  std::vector<std::size_t> out;
  for (std::size_t i = k_window; i + k_window <= y.size(); ++i) {
    const std::size_t from = i - k_window, to = std::min(y.size() - 1, i + k_window);
    bool is_max = ratio[i] >= threshold;
    for (std::size_t j = from; j <= to && is_max; ++j) {
      is_max = ratio[j] < ratio[i] || (ratio[j] == ratio[i] && j >= i);
    }
    if (is_max) {
      out.push_back(i);
    }
  }
  return out;
}

std::vector<std::size_t> lkp_rule(const std::vector<bisect::SeriesPoint>& series) {
  constexpr std::size_t k_base_commits = 3;
  std::vector<std::size_t> out;
  for (std::size_t i = k_base_commits; i < series.size(); ++i) {
    std::vector<double> base;
    for (std::size_t j = i - k_base_commits; j < i; ++j) {
      base.insert(base.end(), series[j].samples.begin(), series[j].samples.end());
    }
    if (!bisect::lkp_changed(base, series[i].samples)) {
      continue;
    }
    if (out.empty() || i - out.back() > k_base_commits) {
      out.push_back(i);
    }
  }
  return out;
}

std::vector<std::size_t> perfherder_rule(const std::vector<bisect::SeriesPoint>& series) {
  constexpr double k_t_threshold = 7.0, k_alert_threshold = 0.02;
  constexpr std::size_t k_min_back = 12, k_fore = 12;
  std::vector<PerfherderPoint> points(series.size());
  std::size_t last_seen_regression = 0;
  for (std::size_t i = 1; i < series.size(); ++i) {
    points[i] = perfherder_at(series, i, last_seen_regression);
    last_seen_regression = points[i].t <= k_t_threshold ? last_seen_regression + 1 : 0;
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 1; i < series.size(); ++i) {
    const PerfherderPoint& p = points[i];
    if (p.prev_values < k_min_back || p.next_values < k_fore || p.t <= k_t_threshold) {
      continue;
    }
    if (points[i - 1].t > p.t || (i + 1 < series.size() && points[i + 1].t > p.t)) {
      continue;
    }
    if (std::abs(p.change) >= k_alert_threshold) {
      out.push_back(i);
    }
  }
  return out;
}

} // namespace bisectd::bench
