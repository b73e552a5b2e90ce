// Two-sample tests: Welch and Student t, Mann-Whitney U with exact or normal p-values.

#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

namespace bisectd::bisect {

namespace {

double two_sided_t_p(double t, double df) {
  if (!std::isfinite(t)) {
    return std::isnan(t) ? 1.0 : 0.0;
  }
  return std::min(1.0, 2.0 * student_t_cdf(-std::abs(t), df));
}

struct RankSums {
  double rank_sum_b = 0;
  double tie_term = 0; // sum over tie groups of t^3 - t
};

// Average ranks (1-based) of the pooled sample; returns the rank sum of b and the tie correction term.
RankSums rank_sums(std::span<const double> a, std::span<const double> b) {
  std::vector<std::pair<double, bool>> pooled; // value, is_b
  pooled.reserve(a.size() + b.size());
  for (double v : a) {
    pooled.emplace_back(v, false);
  }
  for (double v : b) {
    pooled.emplace_back(v, true);
  }
  std::sort(pooled.begin(), pooled.end());
  RankSums out;
  std::size_t i = 0;
  while (i < pooled.size()) {
    std::size_t j = i;
    while (j + 1 < pooled.size() && pooled[j + 1].first == pooled[i].first) {
      ++j;
    }
    const double avg_rank = (static_cast<double>(i + j) / 2.0) + 1.0;
    const auto t = static_cast<double>(j - i + 1);
    out.tie_term += t * t * t - t;
    for (std::size_t k = i; k <= j; ++k) {
      out.rank_sum_b += pooled[k].second ? avg_rank : 0.0;
    }
    i = j + 1;
  }
  return out;
}

// Number of orderings giving each U for sizes m, n: coefficients of the Gaussian binomial [m+n choose m]_q,
// built as prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). Exact in doubles while C(m+n, m) < 2^53.
std::vector<double> u_counts(std::size_t m, std::size_t n) {
  std::vector<double> poly(m * n + 1 + n + m, 0.0);
  poly[0] = 1.0;
  std::size_t degree = 0;
  for (std::size_t i = 1; i <= m; ++i) {
    const std::size_t shift = n + i;
    for (std::size_t k = degree + shift; k >= shift; --k) {
      poly[k] -= poly[k - shift];
    }
    degree += shift;
    for (std::size_t k = i; k <= degree; ++k) {
      poly[k] += poly[k - i];
    }
    degree -= i;
  }
  poly.resize(m * n + 1);
  return poly;
}

} // namespace

TTestResult welch_t_test(std::span<const double> a, std::span<const double> b) {
  TTestResult out;
  if (a.size() < 2 || b.size() < 2) {
    return out;
  }
  const auto na = static_cast<double>(a.size());
  const auto nb = static_cast<double>(b.size());
  const double va = variance(a) / na;
  const double vb = variance(b) / nb;
  const double diff = mean(b) - mean(a);
  if (va + vb == 0.0) {
    out.t = diff == 0.0 ? 0.0 : std::copysign(INFINITY, diff);
    out.df = na + nb - 2.0;
    out.p_value = diff == 0.0 ? 1.0 : 0.0;
    return out;
  }
  out.t = diff / std::sqrt(va + vb);
  out.df = (va + vb) * (va + vb) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
  out.p_value = two_sided_t_p(out.t, out.df);
  return out;
}

TTestResult student_t_test(std::span<const double> a, std::span<const double> b) {
  TTestResult out;
  if (a.size() < 2 || b.size() < 2) {
    return out;
  }
  const auto na = static_cast<double>(a.size());
  const auto nb = static_cast<double>(b.size());
  out.df = na + nb - 2.0;
  const double pooled = ((na - 1.0) * variance(a) + (nb - 1.0) * variance(b)) / out.df;
  const double diff = mean(b) - mean(a);
  const double se = std::sqrt(pooled * (1.0 / na + 1.0 / nb));
  if (se == 0.0) {
    out.t = diff == 0.0 ? 0.0 : std::copysign(INFINITY, diff);
    out.p_value = diff == 0.0 ? 1.0 : 0.0;
    return out;
  }
  out.t = diff / se;
  out.p_value = two_sided_t_p(out.t, out.df);
  return out;
}

double mann_whitney_exact_p(double u, std::size_t n_a, std::size_t n_b) {
  const std::vector<double> counts = u_counts(n_a, n_b);
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  const auto k = static_cast<std::size_t>(std::llround(std::clamp(u, 0.0, static_cast<double>(n_a * n_b))));
  double lower = 0.0;
  for (std::size_t i = 0; i <= k; ++i) {
    lower += counts[i];
  }
  const double upper = total - lower + counts[k];
  return std::min(1.0, 2.0 * std::min(lower, upper) / total);
}

RankTestResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  RankTestResult out;
  if (a.empty() || b.empty()) {
    return out;
  }
  const auto na = static_cast<double>(a.size());
  const auto nb = static_cast<double>(b.size());
  const auto total = na + nb;
  const RankSums sums = rank_sums(a, b);
  out.u = sums.rank_sum_b - nb * (nb + 1.0) / 2.0;
  const double mu = na * nb / 2.0;
  const double var = na * nb / 12.0 * ((total + 1.0) - sums.tie_term / (total * (total - 1.0)));
  out.z = var > 0.0 ? (out.u - mu) / std::sqrt(var) : 0.0;
  if (sums.tie_term == 0.0 && a.size() + b.size() <= 50) {
    out.method = PValueMethod::exact;
    out.p_value = mann_whitney_exact_p(out.u, a.size(), b.size());
    return out;
  }
  out.method = PValueMethod::normal;
  if (var <= 0.0) {
    out.p_value = 1.0; // every value tied: no evidence either way
    return out;
  }
  const double corrected = std::max(0.0, std::abs(out.u - mu) - 0.5) / std::sqrt(var);
  out.p_value = std::min(1.0, 2.0 * normal_cdf(-corrected));
  return out;
}

} // namespace bisectd::bisect
