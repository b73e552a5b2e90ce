#include "bisect/prebuild.hpp"

#include "bisect/bcb.hpp"
#include "bisect/engine_data.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace bisectd::bisect {

namespace {

struct Target {
  double cdf = 0;    // where the next round would split: the midpoint of an interval of the CDF
  double weight = 0; // the interval's mass: how likely the change lies there after the round in flight
};

// One target per interval between the in-flight commits' CDF values (or the K-machine round's quantiles).
std::vector<Target> next_round_targets(const BcbContext& ctx) {
  const auto& s = ctx.problem->settings;
  const double total = ctx.cdf.empty() ? 0.0 : ctx.cdf.back(); // 1 - P(no change)
  std::vector<double> bounds{0.0, total};
  if (s.in_flight.empty()) {
    int k = std::max(1, s.idle_machines);
    for (int j = 1; j <= k; ++j) {
      bounds.push_back(total * j / (k + 1));
    }
  } else {
    for (std::size_t i : s.in_flight) {
      if (i < ctx.cdf.size()) {
        bounds.push_back(ctx.cdf[i]);
      }
    }
  }
  std::sort(bounds.begin(), bounds.end());
  std::vector<Target> targets;
  for (std::size_t j = 0; j + 1 < bounds.size(); ++j) {
    double mass = bounds[j + 1] - bounds[j];
    if (mass > 1e-9) {
      targets.push_back({(bounds[j] + bounds[j + 1]) / 2, mass});
    }
  }
  // Best first; stable so equal masses keep CDF order.
  std::stable_sort(targets.begin(), targets.end(),
                   [](const Target& a, const Target& b) { return a.weight > b.weight; });
  return targets;
}

// The pickable commit whose CDF is nearest to `q` among the last one below q and the first one at or above it
// (testing commit i splits the mass at cdf[i]). Built or in-flight commits count: the round would pick them
// for free, so nothing needs building for this target.
std::optional<std::size_t> nearest_pickable(const BcbContext& ctx, double q) {
  const std::size_t n = ctx.cdf.size();
  std::size_t i = static_cast<std::size_t>(std::lower_bound(ctx.cdf.begin(), ctx.cdf.end(), q) - ctx.cdf.begin());
  std::optional<std::size_t> below;
  std::optional<std::size_t> above;
  for (std::size_t j = std::min(i, n); j-- > 0;) {
    if (ctx.pickable[j]) {
      below = j;
      break;
    }
  }
  for (std::size_t j = i; j < n; ++j) {
    if (ctx.pickable[j]) {
      above = j;
      break;
    }
  }
  if (!below || !above) {
    return below ? below : above;
  }
  return std::abs(ctx.cdf[*below] - q) <= std::abs(ctx.cdf[*above] - q) ? below : above;
}

bool settled(const BcbContext& ctx) {
  const double one_minus_delta = 1.0 - ctx.problem->settings.delta;
  double best = ctx.p.empty() ? 0.0 : *std::max_element(ctx.p.begin(), ctx.p.end());
  return best >= one_minus_delta || ctx.post.p_none >= one_minus_delta;
}

// Built commits without samples yet that the search may still pick (strictly inside the posterior's bulk):
// earlier prebuilds not used so far. Prebuilding more while they wait mostly buys builds nobody runs.
int waiting_prebuilds(const BcbContext& ctx) {
  int n = 0;
  for (std::size_t b : ctx.problem->settings.built) {
    bool live = b < ctx.cdf.size() && ctx.cdf[b] > 0.02 && ctx.cdf[b] < ctx.cdf.back() - 0.02;
    n += live && ctx.pickable[b] && ctx.data->at(b).empty() ? 1 : 0;
  }
  return n;
}

} // namespace

std::vector<std::size_t> prebuild_candidates(const Problem& problem, int max_count) {
  const auto& s = problem.settings;
  if (max_count <= 0 || s.method != Method::bcb) {
    return {};
  }
  std::string error;
  auto data = make_chain_data(problem, error);
  if (!data || data->builds >= s.max_builds) {
    return {};
  }
  const BcbContext ctx = make_bcb_context(problem, *data);
  if (settled(ctx)) {
    return {};
  }
  if (waiting_prebuilds(ctx) >= max_count) {
    return {}; // measured on the target row: 24.9 builds without this cap, 17.5 with it, machine time 4.8 -> 5.0 h
  }
  std::vector<std::size_t> out;
  for (const Target& t : next_round_targets(ctx)) {
    auto b = nearest_pickable(ctx, t.cdf);
    if (!b || !data->at(*b).empty() || contains(s.built, *b) || contains(s.in_flight, *b) || contains(out, *b)) {
      continue;
    }
    out.push_back(*b);
    if (static_cast<int>(out.size()) >= max_count) {
      break;
    }
  }
  return out;
}

int unused_prebuilds(const std::vector<std::string>& shas, const Problem& problem) {
  std::set<std::size_t> measured;
  for (const auto& s : problem.samples) {
    measured.insert(s.commit);
  }
  int n = 0;
  for (std::size_t i = 0; i < problem.chain.size(); ++i) {
    const auto& c = problem.chain[i];
    bool prebuilt = std::find(shas.begin(), shas.end(), c.id) != shas.end();
    bool has_samples = measured.contains(i) || (c.same_as && measured.contains(*c.same_as));
    n += prebuilt && !has_samples ? 1 : 0;
  }
  return n;
}

} // namespace bisectd::bisect
