// Step against ramp: whether the points around a change are explained better by a gradual change (flat, a
// straight ramp of at least a few points, flat) than by a jump between two adjacent points. A bisection can
// pin a jump on one commit; a ramp spread over many commits it cannot.

#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bisectd::bisect::detail {

namespace {

constexpr std::size_t k_step_slack = 5; // positions either side of pos tried for the step

// The window's points (clipped) with prefix sums of z and t*z (t local), so
// that any ramp or step regression costs O(1).
class Window {
public:
  Window(std::span<const double> y, double sigma) : m_sum(y.size() + 1, 0.0), m_tsum(m_sum) {
    const std::vector<double> clipped = clip_to_running_median(y, sigma);
    for (std::size_t t = 0; t < y.size(); ++t) {
      const double z = clipped[t];
      m_sum[t + 1] = m_sum[t] + z;
      m_tsum[t + 1] = m_tsum[t] + static_cast<double>(t) * z;
      m_zz += z * z;
    }
  }
  std::size_t size() const { return m_sum.size() - 1; }
  double n() const { return static_cast<double>(size()); }
  double sz() const { return m_sum.back(); }
  double szz() const { return m_zz; }
  double z_from(std::size_t a) const { return m_sum.back() - m_sum[a]; }

  // The ramp u_t = 0 before s, (t - s) / (e - s) on [s, e), 1 from e; sums of u, u^2 and z u over [a, n).
  struct Sums {
    double u = 0, uu = 0, zu = 0;
  };
  Sums ramp_from(std::size_t s, std::size_t e, std::size_t a) const {
    const double len = static_cast<double>(e - s);
    Sums out;
    const std::size_t r0 = std::max(a, s);
    if (r0 < e) { // ramp part: k = t - s for t in [r0, e)
      const double k0 = static_cast<double>(r0 - s), k1 = static_cast<double>(e - s);
      out.u = (k1 * (k1 - 1.0) - k0 * (k0 - 1.0)) / 2.0 / len;
      out.uu = (sq_sum(k1) - sq_sum(k0)) / (len * len);
      out.zu = ((m_tsum[e] - m_tsum[r0]) - static_cast<double>(s) * (m_sum[e] - m_sum[r0])) / len;
    }
    const std::size_t f0 = std::max(a, e);
    out.u += static_cast<double>(size() - f0);
    out.uu += static_cast<double>(size() - f0);
    out.zu += z_from(f0);
    return out;
  }

private:
  static double sq_sum(double k) { return (k - 1.0) * k * (2.0 * k - 1.0) / 6.0; } // sum of j^2, j < k
  std::vector<double> m_sum, m_tsum;
  double m_zz = 0;
};

// Residual sum of squares of z ~ c + d u (sums over the window).
double rss1(const Window& w, double su, double suu, double szu) {
  const double n = w.n(), z_var = w.szz() - w.sz() * w.sz() / n, u_var = suu - su * su / n;
  const double zu = szu - w.sz() * su / n;
  return u_var > 0.0 ? z_var - zu * zu / u_var : z_var;
}

// Residual sum of squares of z ~ c + d u + f v, v the step indicator from q.
double rss2(const Window& w, const Window::Sums& u, const Window::Sums& uv, std::size_t q) {
  const double n = w.n(), sv = static_cast<double>(w.size() - q);
  const double z_var = w.szz() - w.sz() * w.sz() / n;
  const double a = u.uu - u.u * u.u / n, b = uv.u - u.u * sv / n, c = sv - sv * sv / n;
  const double zu = u.zu - w.sz() * u.u / n, zv = w.z_from(q) - w.sz() * sv / n;
  const double det = a * c - b * b;
  if (det <= 1e-12 * a * c) {
    return rss1(w, u.u, u.uu, u.zu);
  }
  return z_var - (c * zu * zu - 2.0 * b * zu * zv + a * zv * zv) / det;
}

} // namespace

RampTest ramp_test(std::span<const double> y, std::size_t pos, double sigma, std::size_t min_ramp) {
  RampTest out;
  const std::size_t n = y.size();
  if (sigma <= 0.0 || pos == 0 || n <= pos || n < min_ramp + 2) {
    return out;
  }
  const Window w(y, sigma);
  const std::size_t q_lo = pos > k_step_slack ? pos - k_step_slack : 1, q_hi = std::min(n - 1, pos + k_step_slack);
  // The step may sit a few points off pos (candidates are relocated only after the merge).
  double step = INFINITY;
  for (std::size_t q = q_lo; q <= q_hi; ++q) {
    const double r = static_cast<double>(n - q);
    step = std::min(step, rss1(w, r, r, w.z_from(q)));
  }
  // Ramps from s (u = 0) to e (u = 1) straddling the change: s <= pos <= e, e - s >= min_ramp.
  double ramp = step;
  for (std::size_t s = 0; s <= pos; ++s) {
    for (std::size_t e = std::max(pos, s + min_ramp); e <= n; ++e) {
      const Window::Sums u = w.ramp_from(s, e, 0);
      const double r = rss1(w, u.u, u.uu, u.zu);
      ramp = std::min(ramp, r);
    }
  }
  out.advantage = (step - ramp) / (sigma * sigma);
  if (out.advantage <= 0.0) {
    return out;
  }
  // Does a jump still explain something once the best ramp is there? (A step inside or beside a real ramp.)
  // Ramps of any position (not only straddling pos) may combine with the jump.
  double ramp_and_step = ramp;
  for (std::size_t s = 0; s + min_ramp <= n; ++s) {
    for (std::size_t e = s + min_ramp; e <= n; ++e) {
      const Window::Sums u = w.ramp_from(s, e, 0);
      for (std::size_t q = q_lo; q <= q_hi; ++q) {
        ramp_and_step = std::min(ramp_and_step, rss2(w, u, w.ramp_from(s, e, q), q));
      }
    }
  }
  out.jump_given_ramp = (ramp - ramp_and_step) / (sigma * sigma);
  return out;
}

} // namespace bisectd::bisect::detail
