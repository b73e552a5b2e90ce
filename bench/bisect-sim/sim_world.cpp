#include "sim_world.hpp"

#include <cmath>

namespace bisectd::sim {

namespace {

constexpr std::size_t k_branch_len = 20;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

} // namespace

const char* to_string(Noise noise) {
  switch (noise) {
  case Noise::gaussian: return "gaussian";
  case Noise::student_t3: return "student_t3";
  case Noise::outliers: return "outliers5pct_5sigma";
  case Noise::outliers_wide: return "outliers5pct_5to10sigma";
  case Noise::bimodal: return "bimodal";
  case Noise::boot_offsets: return "boot_offsets";
  case Noise::drift: return "drift";
  }
  return "?";
}

double World::unit(std::uint64_t a, std::uint64_t b, std::uint64_t c) const {
  std::uint64_t h = mix(m_key ^ mix(a ^ mix(b ^ mix(c))));
  return (static_cast<double>(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double World::gauss(std::uint64_t a, std::uint64_t b, std::uint64_t c) const {
  double u1 = unit(a, b, c * 2 + 1);
  double u2 = unit(a, b, c * 2 + 2);
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

World::World(const Scenario& scenario, std::uint64_t seed, int trial)
    : m_scenario(scenario), m_key(mix(seed * 1000003ULL + static_cast<std::uint64_t>(trial))) {
  std::size_t n = scenario.n;
  std::size_t total = n + 1 + static_cast<std::size_t>(scenario.merges) * k_branch_len;
  m_unbuildable.assign(total, false);
  m_relevant.assign(total, true);
  for (std::size_t i = 1; i < total; ++i) {
    m_unbuildable[i] = i != n && unit(1, i, 0) < scenario.unbuildable;
    m_relevant[i] = i == n || unit(2, i, 0) >= scenario.irrelevant;
  }
  for (int m = 0; m < scenario.merges; ++m) {
    // Merges spread over the mainline; each forks 30 commits before it.
    std::size_t at = (static_cast<std::size_t>(m) + 1) * n / (static_cast<std::size_t>(scenario.merges) + 1);
    std::vector<std::size_t> ids;
    for (std::size_t j = 0; j < k_branch_len; ++j) {
      ids.push_back(n + 1 + static_cast<std::size_t>(m) * k_branch_len + j);
      m_unbuildable[ids.back()] = false;
      m_relevant[ids.back()] = true;
    }
    m_branches.push_back({at, ids});
  }
  if (!scenario.no_change) {
    // Uniform over commits that can be blamed exactly: relevant, buildable, not a merge itself.
    for (std::uint64_t attempt = 0;; ++attempt) {
      std::size_t c = 1 + static_cast<std::size_t>(unit(3, attempt, 0) * static_cast<double>(total - 1));
      bool is_merge = false;
      for (const auto& b : m_branches) {
        is_merge = is_merge || b.first == c;
      }
      bool allowed = !scenario.culprit_in_branch || m_branches.empty() || c > n;
      if (c < total && m_relevant[c] && !m_unbuildable[c] && !is_merge && allowed) {
        m_culprit = c;
        break;
      }
    }
  }
  if (scenario.noise == Noise::drift) {
    m_drift.assign(4096, 0.0);
    for (std::size_t t = 1; t < m_drift.size(); ++t) {
      m_drift[t] = m_drift[t - 1] + std::sqrt(0.2) * gauss(4, t, 0); // var 0.2 sigma^2 per run
    }
  }
}

bool World::bad(std::size_t commit) const {
  if (!m_culprit) {
    return false;
  }
  // Where the culprit lands on the mainline, and (branch, index) when it sits inside a branch.
  std::size_t c = *m_culprit;
  std::size_t main_c = c;
  int culprit_branch = -1;
  std::size_t culprit_index = 0;
  for (std::size_t b = 0; b < m_branches.size(); ++b) {
    for (std::size_t j = 0; j < m_branches[b].second.size(); ++j) {
      if (m_branches[b].second[j] == c) {
        main_c = m_branches[b].first;
        culprit_branch = static_cast<int>(b);
        culprit_index = j;
      }
    }
  }
  if (commit <= m_scenario.n) {
    return commit >= main_c;
  }
  for (std::size_t b = 0; b < m_branches.size(); ++b) {
    for (std::size_t j = 0; j < m_branches[b].second.size(); ++j) {
      if (m_branches[b].second[j] == commit) {
        if (static_cast<int>(b) == culprit_branch) {
          return j >= culprit_index;
        }
        return fork_of(b) >= main_c;
      }
    }
  }
  return false;
}

std::size_t World::fork_of(std::size_t branch) const {
  std::size_t at = m_branches[branch].first;
  return at > 30 ? at - 30 : 0;
}

double World::drift_at(std::int64_t seq) const {
  if (m_drift.empty()) {
    return 0;
  }
  auto t = static_cast<std::size_t>(std::max<std::int64_t>(0, seq));
  return m_drift[std::min(t, m_drift.size() - 1)];
}

double World::value(std::size_t commit, int visit, int run, std::int64_t seq) const {
  const double shift = bad(commit) ? -m_scenario.d : 0.0; // a throughput regression, in sigma units
  auto c = static_cast<std::uint64_t>(commit);
  auto r = static_cast<std::uint64_t>(visit) * 1000 + static_cast<std::uint64_t>(run);
  double e = gauss(5, c, r);
  switch (m_scenario.noise) {
  case Noise::gaussian: break;
  case Noise::student_t3: { // unit variance: t3 / sqrt(3)
    double chi2 = 0;
    for (std::uint64_t k = 0; k < 3; ++k) {
      double g = gauss(6, c, r * 4 + k);
      chi2 += g * g;
    }
    e = e / std::sqrt(chi2 / 3) / std::sqrt(3.0);
    break;
  }
  case Noise::outliers: e = unit(7, c, r) < 0.05 ? 5 * gauss(8, c, r) : e; break;
  case Noise::outliers_wide: // 5 % of runs wild, 5 to 10 sigma away either way (what a lab's hiccups look like)
    if (unit(7, c, r) < 0.05) {
      e = (unit(11, c, r) < 0.5 ? -1.0 : 1.0) * (5 + 5 * unit(12, c, r));
    }
    break;
  case Noise::bimodal: // 30 % of runs in a slow mode 1.5 sigma away, each mode 0.6 sigma wide
    e = 0.6 * e + (unit(9, c, r) < 0.3 ? -1.5 : 0.0);
    break;
  case Noise::boot_offsets: // boot-to-boot sd equal to the run-to-run sd
    e += gauss(10, c, static_cast<std::uint64_t>(visit));
    break;
  case Noise::drift: e += drift_at(seq); break;
  }
  return 1000.0 * std::exp(k_sigma * (shift + e));
}

} // namespace bisectd::sim
