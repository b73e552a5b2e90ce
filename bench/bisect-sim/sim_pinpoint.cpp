// Pinpoint-like baseline (catapult pinpoint, research §1): p = min(KS, MWU) per adjacent pair of tested commits,
// DIFFERENT at p <= 0.01, UNKNOWN up to a magnitude- and n-dependent high threshold, attempts 10 -> 20 -> 40 ->
// 80 -> 160 on UNKNOWN, midpoint insertion on DIFFERENT (speculation level 1), improvement direction -> SAME,
// at most 60 builds. The high thresholds are regenerated here with the recipe of thresholds_performance.py
// (the 99th percentile of the MWU p-value when two normals are `magnitude` IQRs apart), not copied.
#include "bisect/stats.hpp"
#include "sim_runner.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace bisectd::sim {

namespace {

constexpr int k_min_attempts = 10, k_max_attempts = 160, k_max_builds = 60;
constexpr double k_low = 0.01;

double ks_p(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  std::size_t i = 0, j = 0;
  double dmax = 0;
  while (i < a.size() && j < b.size()) {
    double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) {
      ++i;
    }
    while (j < b.size() && b[j] <= x) {
      ++j;
    }
    dmax = std::max(dmax, std::abs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  double en = std::sqrt(na * nb / (na + nb));
  double lambda = (en + 0.12 + 0.11 / en) * dmax;
  double sum = 0;
  for (int k = 1; k <= 100; ++k) {
    sum += (k % 2 == 1 ? 2.0 : -2.0) * std::exp(-2.0 * k * k * lambda * lambda);
  }
  return std::clamp(sum, 0.0, 1.0);
}

double iqr(std::vector<double> v) { return bisect::quantile(v, 0.75) - bisect::quantile(v, 0.25); }

// High threshold for (magnitude row, n), generated once per cell by a small deterministic Monte Carlo.
class Thresholds {
public:
  double high(double magnitude, int n) {
    int row = std::clamp(static_cast<int>(magnitude * 10), 3, 40);
    n = std::clamp(n, 1, k_max_attempts);
    auto key = std::pair{row, n};
    if (auto it = m_cache.find(key); it != m_cache.end()) {
      return it->second;
    }
    return m_cache[key] = simulate(row / 10.0 * 1.349, n);
  }

private:
  static double simulate(double shift_sigma, int n) {
    const int reps = 400;
    std::vector<double> ps;
    std::uint64_t state =
      0x1234567ULL + static_cast<std::uint64_t>(n) * 7919 + static_cast<std::uint64_t>(shift_sigma * 1000);
    auto gauss = [&state] {
      auto next = [&state] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (static_cast<double>(state >> 11) + 0.5) / 9007199254740992.0;
      };
      double u1 = next(), u2 = next();
      return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    };
    for (int r = 0; r < reps; ++r) {
      std::vector<double> a, b;
      for (int i = 0; i < n; ++i) {
        a.push_back(gauss());
        b.push_back(gauss() + shift_sigma);
      }
      ps.push_back(bisect::mann_whitney_u(a, b).p_value);
    }
    std::sort(ps.begin(), ps.end());
    return ps[static_cast<std::size_t>(0.99 * (reps - 1))];
  }
  std::map<std::pair<int, int>, double> m_cache;
};

enum class Cmp { same, different, unknown };

Cmp compare(const std::vector<double>& a, const std::vector<double>& b, double abs_delta, Thresholds& th) {
  if (a.empty() || b.empty()) {
    return Cmp::unknown;
  }
  if (bisect::mean(b) >= bisect::mean(a)) {
    return Cmp::same; // improvement direction (throughput went up): not the regression we bisect
  }
  double p = std::min(ks_p(a, b), bisect::mann_whitney_u(a, b).p_value);
  if (p <= k_low) {
    return Cmp::different;
  }
  double spread = std::max(iqr(a), iqr(b));
  double magnitude = spread > 0 ? abs_delta / spread : 4.0;
  int n = static_cast<int>((a.size() + b.size()) / 2);
  return p <= th.high(magnitude, n) ? Cmp::unknown : Cmp::same;
}

std::map<std::size_t, std::vector<double>> values_by_id(const Lab& lab) {
  std::map<std::size_t, std::vector<double>> out;
  for (const auto& s : lab.samples()) {
    if (s.alert) {
      continue; // Pinpoint runs its own attempts at both endpoints; it never sees the dashboard's samples
    }
    out[s.id].push_back(s.value);
  }
  return out;
}

// Runs `attempts` more runs of `id`, split over the machines in chunks (each chunk one boot).
void add_attempts(Lab& lab, std::size_t id, int attempts, int machines) {
  int chunk = std::max(1, (attempts + machines - 1) / machines);
  while (attempts > 0 && !lab.known_unbuildable(id)) {
    if (lab.idle() == 0) {
      lab.advance();
      continue;
    }
    int n = std::min(chunk, attempts);
    lab.dispatch({id, n, false});
    attempts -= n;
  }
}

} // namespace

std::vector<std::size_t> run_pinpoint(const World& world, Lab& lab, const std::vector<std::size_t>& ids) {
  Thresholds th;
  const double abs_delta = 1000.0 * (1 - std::exp(-k_sigma * world.scenario().d)); // the alert's magnitude
  const int machines = world.scenario().k_machines;
  std::map<std::size_t, int> attempts; // index into ids -> attempts requested
  std::vector<std::size_t> tested{0, ids.size() - 1};
  int builds = 2;
  for (std::size_t t : tested) {
    attempts[t] = k_min_attempts;
    add_attempts(lab, ids[t], k_min_attempts, machines);
  }
  for (int round = 0; round < 200; ++round) {
    while (lab.advance()) {
    }
    lab.count_round();
    auto vals = values_by_id(lab);
    std::vector<std::size_t> culprits;
    std::vector<std::pair<std::size_t, int>> more;
    std::vector<std::size_t> insert;
    for (std::size_t k = 0; k + 1 < tested.size(); ++k) {
      std::size_t a = tested[k], b = tested[k + 1];
      Cmp c = compare(vals[ids[a]], vals[ids[b]], abs_delta, th);
      if (c == Cmp::different) {
        if (b - a == 1) {
          culprits.push_back(ids[b]);
        } else if (builds < k_max_builds) {
          std::size_t m = (a + b) / 2;
          for (std::size_t off = 0; off < b - a && lab.known_unbuildable(ids[m]); ++off) {
            m = (a + b) / 2 + (off % 2 == 0 ? off / 2 + 1 : 0) - (off % 2 == 1 ? (off + 1) / 2 : 0);
          }
          if (m > a && m < b && !lab.known_unbuildable(ids[m])) {
            insert.push_back(m);
            ++builds;
          }
        }
      } else if (c == Cmp::unknown) {
        for (std::size_t side : {a, b}) {
          int other = attempts[side == a ? b : a];
          if (attempts[side] <= other && attempts[side] < k_max_attempts) {
            more.push_back({side, attempts[side]});
          }
        }
      }
    }
    if (insert.empty() && more.empty()) {
      return culprits;
    }
    for (auto [side, n] : more) {
      if (attempts[side] == n) { // doubling, once per round even if two pairs ask
        attempts[side] = 2 * n;
        add_attempts(lab, ids[side], n, machines);
      }
    }
    for (std::size_t m : insert) {
      // An unbuildable midpoint yields no values; Pinpoint then compares around it and gives up on that side.
      tested.insert(std::upper_bound(tested.begin(), tested.end(), m), m);
      attempts[m] = k_min_attempts;
      add_attempts(lab, ids[m], k_min_attempts, machines);
    }
    tested.erase(
      std::remove_if(tested.begin(), tested.end(), [&](std::size_t t) { return lab.known_unbuildable(ids[t]); }),
      tested.end());
  }
  return {};
}

} // namespace bisectd::sim
