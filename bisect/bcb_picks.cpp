// BCB's choice of what to run next: expected information gain (entropy of the culprit posterior) per second of
// cost, over a small candidate set around the posterior quantiles j/(K+1) (FACF NextRuns), K picks distinct,
// handed out in synchronous rounds.
#include "bisect/bcb.hpp"
#include "bisect/bcb_math.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace bisectd::bisect {

namespace {

constexpr int k_quad = 8; // equal-weight quantile points of each predictive side

// Model-averaged predictive of one new unit of `runs` runs at `b`, moment-matched per side: x = 0 (b is before
// the change, or there is none) and x = 1 (b is at or after it). weight[1] is P(b is bad).
struct Predictive {
  double weight[2] = {0, 0}, mean[2] = {0, 0}, var[2] = {0, 0};
};

Predictive predictive(const BcbContext& ctx, std::size_t b, int runs) {
  const auto& post = ctx.post;
  const std::size_t segs = post.seg_prior.size();
  double m2[2] = {0, 0};
  Predictive p;
  for (std::size_t g = 0; g < post.joint.size(); ++g) {
    const BcbComponent& comp = ctx.priors.components[g];
    const double a = ctx.priors.nu0 * ctx.priors.s02;
    for (std::size_t h = 0; h <= segs; ++h) {
      double mass = post.joint[g][h];
      if (mass < 1e-12) {
        continue;
      }
      // Share of this hypothesis with b bad: all of it after the segment, part of it inside, none before.
      double bad_share = 0;
      if (h < segs && b > post.bounds[h]) {
        bad_share = b >= post.bounds[h + 1] || post.seg_prior[h] <= 0
                      ? 1.0
                      : (ctx.prefix_a[b + 1] - ctx.prefix_a[post.bounds[h] + 1]) / post.seg_prior[h];
      }
      const FilterState& st = post.states[g][h];
      double s2 = (a + st.quad + st.within_ss) / (ctx.priors.nu0 + std::max(0.0, st.runs - 1));
      for (int x = 0; x < 2; ++x) {
        double w = mass * (x == 1 ? bad_share : 1.0 - bad_share);
        if (w <= 0) {
          continue;
        }
        double mean = st.w + x * st.d;
        double var = s2 * (st.pww + 2 * x * st.pwd + x * st.pdd + comp.q + comp.lambda + 1.0 / runs);
        p.weight[x] += w;
        p.mean[x] += w * mean;
        m2[x] += w * (var + mean * mean);
      }
    }
  }
  for (int x = 0; x < 2; ++x) {
    if (p.weight[x] > 0) {
      p.mean[x] /= p.weight[x];
      p.var[x] = std::max(1e-300, m2[x] / p.weight[x] - p.mean[x] * p.mean[x]);
    }
  }
  return p;
}

bool is_built(const BcbContext& ctx, std::size_t b) {
  return !ctx.data->at(b).empty() || contains(ctx.problem->settings.built, b);
}

double cost_of(const BcbContext& ctx, std::size_t b, int runs, bool fresh_boot) {
  const auto& s = ctx.problem->settings;
  double c = runs * s.cost.run_s;
  c += is_built(ctx, b) || s.prebuild ? 0.0 : s.cost.build_s;
  c += contains(s.installed, b) && !fresh_boot ? 0.0 : s.cost.boot_s;
  return std::max(c, 1e-9);
}

// Entropy after `runs` more runs at `b` with mean `mean`. A rerun on the kernel that is still booted joins the
// last boot unit (it shares that boot's offset), which needs a full recompute; anything else is a new unit.
double entropy_with(const BcbContext& ctx, std::size_t b, int runs, double mean, bool joins_last) {
  if (!joins_last) {
    return entropy_after(ctx.post, ctx.prefix_a, ctx.prefix_b, ctx.priors, b, runs, mean);
  }
  auto units = ctx.units;
  BcbUnit& u = units.back();
  double n = u.n + runs;
  double m = (u.n * u.mean + runs * mean) / n;
  u.ss += u.n * (u.mean - m) * (u.mean - m) + runs * (mean - m) * (mean - m);
  u.mean = m;
  u.n = n;
  return posterior_entropy(compute_posterior(units, ctx.prior, ctx.priors), ctx.prefix_a, ctx.prefix_b);
}

bool can_join(const BcbContext& ctx, std::size_t b) {
  return contains(ctx.problem->settings.installed, b) && !ctx.units.empty() && ctx.units.back().pos == b;
}

double expected_gain(const BcbContext& ctx, double h0, std::size_t b, int runs, bool joins_last) {
  static const std::array<double, k_quad> zs = [] {
    std::array<double, k_quad> z{};
    for (int j = 0; j < k_quad; ++j) {
      z[static_cast<std::size_t>(j)] = math::normal_quantile((j + 0.5) / k_quad);
    }
    return z;
  }();
  const Predictive pred = predictive(ctx, b, runs);
  double total = pred.weight[0] + pred.weight[1];
  double eh = 0;
  for (int x = 0; x < 2; ++x) {
    double wx = total > 0 ? pred.weight[x] / total : 0.0;
    if (wx < 1e-9) {
      continue;
    }
    double sd = std::sqrt(pred.var[x]);
    for (double z : zs) {
      eh += wx / k_quad * entropy_with(ctx, b, runs, pred.mean[x] + z * sd, joins_last);
    }
  }
  return std::max(0.0, h0 - eh);
}

// First pickable build at or after the point where the CDF reaches `q`, and the last pickable one before it.
void add_quantile(const BcbContext& ctx, double q, std::vector<std::size_t>& out) {
  std::size_t n = ctx.cdf.size();
  std::size_t i = 0;
  while (i < n && ctx.cdf[i] < q) {
    ++i;
  }
  for (std::size_t j = std::min(i, n); j-- > 0;) {
    if (ctx.pickable[j]) {
      out.push_back(j);
      break;
    }
  }
  for (std::size_t j = i; j < n; ++j) {
    if (ctx.pickable[j]) {
      out.push_back(j);
      break;
    }
  }
}

std::vector<std::size_t> candidates(const BcbContext& ctx, double q, double band) {
  std::vector<std::size_t> out;
  add_quantile(ctx, q, out);
  if (band >= 0.5) {
    add_quantile(ctx, q / 2, out);
    add_quantile(ctx, (1 + q) / 2, out);
  }
  for (const auto& u : ctx.units) {
    double f = ctx.cdf[u.pos];
    bool uncertain = f > 1e-3 && f < 1 - 1e-3;
    bool endpoint = u.pos == 0 || u.pos + 1 == ctx.cdf.size();
    if (ctx.pickable[u.pos] && (std::abs(f - q) <= band || (band >= 0.5 && endpoint)) && (uncertain || endpoint)) {
      out.push_back(u.pos);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Quantile targets j/(K+1) (nothing is in flight when picks are made: rounds are synchronous).
std::vector<double> open_targets(int k) {
  std::vector<double> targets;
  for (int j = 1; j <= k; ++j) {
    targets.push_back(static_cast<double>(j) / (k + 1));
  }
  return targets;
}

// Runs per pick. A lone machine (K = 1, nothing in flight) gets one run at a time: the commit stays installed, so
// a second run there costs run_s only and is decided after seeing the first, which is never worse than asking
// for several up front (measured: 42.4 -> 37.3 mean runs and fewer machine-hours on the target row). Several
// runs per pick when the data show boot-to-boot variance (boot-variance components hold >= half the weight:
// several runs per fresh boot average the offset). With K > 1 machines the rounds are the clock (the K = 4
// target, rho_LB): a pick then gets at least runs_per_visit runs, so each of the K answers in a round is nearly
// certain and a round approaches log2(K + 1) bits (measured on n1000_d2.17_gauss_k4, 100 trials: 8.7 rounds
// with {1, 3} runs, 5.9 with {3, 5}, 5.0 with {5, 7} at 1.8x the runs).
std::vector<int> run_options(const BcbContext& ctx, int k) {
  const auto& s = ctx.problem->settings;
  const int visit = std::max(1, s.runs_per_visit);
  if (k > 1) {
    return {visit, visit + 2};
  }
  if (boot_weight(ctx) < 0.5) {
    return {1};
  }
  return {1, visit};
}

// How many runs a pick of `runs` may be scored as: a lone machine issues one run at a time, but a new boot is paid
// once for every run that follows on it, so a commit is scored by its best plan of up to runs_per_visit runs.
int plan_runs(const BcbContext& ctx, int k, int runs) {
  if (k > 1 || runs > 1) {
    return runs;
  }
  return std::max(1, ctx.problem->settings.runs_per_visit);
}

} // namespace

std::vector<Pick> bcb_search_picks(const BcbContext& ctx, std::vector<std::string>& trace) {
  const auto& s = ctx.problem->settings;
  const int k = std::max(1, s.idle_machines);
  const bool builds_left = ctx.data->builds < s.max_builds;
  const double band = k == 1 ? 1.0 : 0.5 / (k + 1);
  const double h0 = posterior_entropy(ctx.post, ctx.prefix_a, ctx.prefix_b);
  std::vector<Pick> picks;
  if (!s.in_flight.empty()) {
    // Synchronous rounds: a pick made while part of the round is still running would see less than the next
    // full round does, and rounds are what K machines save (measured on n1000_d2.17_gauss_k4: 17.7 -> 8.7 rounds).
    trace.push_back("bcb: waiting for the " + std::to_string(s.in_flight.size()) + " commit(s) in flight");
    return picks;
  }
  for (double q : open_targets(k)) {
    double best_score = -1;
    Pick best{0, 0, false};
    for (std::size_t b : candidates(ctx, q, band)) {
      bool taken = std::any_of(picks.begin(), picks.end(), [&](const Pick& p) { return p.commit == b; });
      if (taken || ctx.data->in_flight(b) || (!builds_left && !is_built(ctx, b))) {
        continue;
      }
      for (int runs : run_options(ctx, k)) {
        for (bool fresh : {false, true}) {
          bool join = can_join(ctx, b) && !fresh;
          if (fresh && !can_join(ctx, b)) {
            continue; // not booted now: any run starts a new boot anyway
          }
          int plan_max = plan_runs(ctx, k, runs);
          for (int plan = runs; plan <= plan_max; ++plan) {
            double score = expected_gain(ctx, h0, b, plan, join) / cost_of(ctx, b, plan, fresh);
            if (score > best_score) {
              best_score = score;
              best = {b, runs, false, fresh};
            }
          }
        }
      }
    }
    if (best_score >= 0) {
      picks.push_back(best);
      char buf[160];
      std::snprintf(buf, sizeof buf, "bcb: run %d at %zu%s (P(bad)=%.3g, gain %.3g nats/h, target quantile %.2f)",
                    best.runs, best.commit, best.fresh_boot ? " on a fresh boot" : "", ctx.cdf[best.commit],
                    best_score * 3600, q);
      trace.push_back(buf);
    }
  }
  return picks;
}

} // namespace bisectd::bisect
