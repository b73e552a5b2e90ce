#include "bisect/engine_data.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace bisectd::bisect {

namespace {

// Follows same_as links to their root; a cycle or an out-of-range link is an error.
std::optional<std::size_t> resolve_same_as(const std::vector<Candidate>& chain, std::size_t i) {
  std::size_t at = i;
  for (std::size_t hops = 0; hops <= chain.size(); ++hops) {
    if (!chain[at].same_as) {
      return at;
    }
    if (*chain[at].same_as >= chain.size()) {
      return std::nullopt;
    }
    at = *chain[at].same_as;
  }
  return std::nullopt;
}

} // namespace

std::optional<ChainData> make_chain_data(const Problem& problem, std::string& error) {
  const auto& chain = problem.chain;
  if (chain.size() < 2) {
    error = "chain: needs at least the good and the bad commit";
    return std::nullopt;
  }
  ChainData data;
  data.size = chain.size();
  data.canonical.resize(chain.size());
  data.by_build.resize(chain.size());
  for (std::size_t i = 0; i < chain.size(); ++i) {
    auto root = resolve_same_as(chain, i);
    if (!root) {
      error = "chain[" + std::to_string(i) + "].same_as: out of range or cyclic";
      return std::nullopt;
    }
    data.canonical[i] = *root;
  }
  std::map<std::string, std::size_t> boot_index;
  for (const auto& s : problem.samples) {
    if (s.commit >= chain.size()) {
      error = "sample.commit " + std::to_string(s.commit) + ": outside the chain";
      return std::nullopt;
    }
    if (!(s.value > 0) || !std::isfinite(s.value)) {
      error = "sample.value at commit " + std::to_string(s.commit) + ": must be a finite number > 0";
      return std::nullopt;
    }
    auto [it, inserted] = boot_index.emplace(s.boot, data.boots.size());
    if (inserted) {
      data.boots.push_back(s.boot);
    }
    data.by_build[data.canonical[s.commit]].push_back({std::log(s.value), it->second, s.seq, s.verification});
    ++data.runs;
  }
  data.build_in_flight.assign(chain.size(), false);
  for (std::size_t i : problem.settings.in_flight) {
    if (i >= chain.size()) {
      error = "settings.in_flight " + std::to_string(i) + ": outside the chain";
      return std::nullopt;
    }
    data.build_in_flight[data.canonical[i]] = true;
  }
  for (auto& v : data.by_build) {
    std::stable_sort(v.begin(), v.end(), [](const LogSample& a, const LogSample& b) { return a.seq < b.seq; });
    data.builds += v.empty() ? 0 : 1;
  }
  return data;
}

bool contains(const std::vector<std::size_t>& list, std::size_t i) {
  return std::find(list.begin(), list.end(), i) != list.end();
}

Moments moments(const std::vector<LogSample>& samples) {
  Moments m;
  m.n = static_cast<double>(samples.size());
  if (samples.empty()) {
    return m;
  }
  for (const auto& s : samples) {
    m.mean += s.y;
  }
  m.mean /= m.n;
  if (samples.size() > 1) {
    for (const auto& s : samples) {
      m.var += (s.y - m.mean) * (s.y - m.mean);
    }
    m.var /= (m.n - 1);
  }
  return m;
}

double t_quantile_975(double df) {
  // Table for small df, then the Cornish-Fisher style expansion (error < 1e-3 beyond 30).
  static constexpr double k_table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                       2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
  if (df < 1) {
    df = 1;
  }
  if (df <= 20) {
    return k_table[static_cast<int>(df) - 1];
  }
  const double z = 1.959964;
  return z + (z * z * z + z) / (4 * df) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * df * df);
}

bool shift_interval(const std::vector<LogSample>& parent, const std::vector<LogSample>& culprit, Step& step) {
  if (parent.empty() || culprit.empty()) {
    return false;
  }
  auto a = moments(parent);
  auto b = moments(culprit);
  double diff = b.mean - a.mean;
  // With one sample on a side its variance is unknown: borrow the other side's (or 0 when both have one).
  double va = a.n > 1 ? a.var : b.var;
  double vb = b.n > 1 ? b.var : a.var;
  double se2 = va / a.n + vb / b.n;
  double df = std::max(1.0, a.n + b.n - 2);
  double half = t_quantile_975(df) * std::sqrt(se2);
  step.shift = std::expm1(diff);
  step.shift_low = std::expm1(diff - half);
  step.shift_high = std::expm1(diff + half);
  return true;
}

std::vector<std::size_t> credible_set(const std::vector<double>& posterior, double mass) {
  std::vector<std::size_t> order(posterior.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return posterior[a] > posterior[b]; });
  std::vector<std::size_t> out;
  double acc = 0;
  for (auto i : order) {
    if (acc >= mass || posterior[i] <= 0) {
      break;
    }
    out.push_back(i);
    acc += posterior[i];
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace bisectd::bisect
