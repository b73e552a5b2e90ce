#include "bisect/bcb.hpp"

#include "bisect/confirm_pairs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace bisectd::bisect {

namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Builds we may run: canonical, not skipped, and relevant (some commit of the build has prior mass) or an endpoint.
std::vector<bool> pickable_builds(const Problem& problem, const ChainData& data) {
  std::size_t n = problem.chain.size();
  std::vector<bool> relevant(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (problem.chain[i].prior > 0 || i == 0 || i + 1 == n) {
      relevant[data.canonical[i]] = true;
    }
  }
  std::vector<bool> out(n, false);
  for (std::size_t b = 0; b < n; ++b) {
    out[b] = data.canonical[b] == b && !problem.chain[b].skipped && relevant[b];
  }
  return out;
}

// Parent for verification: the nearest pickable build below `c`.
std::optional<std::size_t> parent_of(const BcbContext& ctx, std::size_t c) {
  for (std::size_t i = c; i-- > 0;) {
    std::size_t b = ctx.data->canonical[i];
    if (b < c && ctx.pickable[b]) {
      return b;
    }
  }
  return std::nullopt;
}

int verification_runs(const ChainData& data, std::size_t commit) {
  int n = 0;
  for (const auto& s : data.at(commit)) {
    n += s.verification ? 1 : 0;
  }
  return n;
}

// The log values of a commit's verification runs in the order they were taken.
std::vector<double> verification_logs(const ChainData& data, std::size_t commit) {
  std::vector<const LogSample*> runs;
  for (const auto& s : data.at(commit)) {
    if (s.verification) {
      runs.push_back(&s);
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const LogSample* a, const LogSample* b) { return a->seq < b->seq; });
  std::vector<double> out;
  for (const auto* s : runs) {
    out.push_back(s->y);
  }
  return out;
}

std::size_t segment_of(const BcbPosterior& post, std::size_t c) {
  auto it = std::lower_bound(post.bounds.begin(), post.bounds.end(), c);
  return static_cast<std::size_t>(it - post.bounds.begin()) - 1;
}

// Fills the shift estimate from the best component under the culprit's segment (log values; the robust variant's
// weighted units).
void fill_shift(const BcbContext& ctx, std::size_t culprit, Step& step) {
  const BcbPosterior& post = ctx.post;
  std::size_t g = static_cast<std::size_t>(std::max_element(post.comp_weight.begin(), post.comp_weight.end()) -
                                           post.comp_weight.begin());
  auto est = shift_estimate(post.states[g][segment_of(post, culprit)], ctx.priors);
  step.shift = std::expm1(est.mean);
  step.shift_low = std::expm1(est.low);
  step.shift_high = std::expm1(est.high);
}

// The sequential test of the verification pairs: sigma is the larger of the history's and the data's run sigma
// (the test's error bound holds for any sigma at least the true one), the shift the alert's when known (it does
// not come from the pairs being tested), else the search's estimate.
PairTest pair_test(const BcbContext& ctx, double search_shift) {
  const auto& s = ctx.problem->settings;
  PairTest t;
  double prior_sigma = s.noise && *s.noise > 0 ? std::log1p(*s.noise) : 0.0;
  t.sigma = std::max(prior_sigma, within_build_sigma(*ctx.data));
  t.threshold = s.threshold;
  t.shift = s.expected_shift && *s.expected_shift > -1 ? *s.expected_shift : search_shift;
  t.alpha = s.delta;
  t.max_pairs = s.verification_pairs;
  return t;
}

// Verification picks for (parent, culprit) (empty: waiting for runs in flight); nullopt when all pairs are done.
std::optional<std::vector<Pick>> verification_picks(const BcbContext& ctx, std::size_t parent, std::size_t culprit,
                                                    Step& step) {
  const auto& s = ctx.problem->settings;
  int have_p = verification_runs(*ctx.data, parent);
  int have_c = verification_runs(*ctx.data, culprit);
  auto verdict = decide_pairs(verification_logs(*ctx.data, parent), verification_logs(*ctx.data, culprit),
                              pair_test(ctx, step.shift));
  if (verdict.decision != PairDecision::more) {
    if (verdict.decision == PairDecision::confirmed) {
      step.trace.push_back("bcb: the shift holds beyond doubt after " + std::to_string(verdict.pairs) + " of at most " +
                           std::to_string(s.verification_pairs) + " pairs (log LR " + fmt(verdict.log_lr) +
                           " >= " + fmt(verdict.bound) + ")");
    }
    return std::nullopt;
  }
  step.trace.push_back("bcb: verifying " + std::to_string(culprit) + " against parent " + std::to_string(parent) +
                       ": " + std::to_string(std::min(have_p, have_c)) + " of at most " +
                       std::to_string(s.verification_pairs) + " interleaved pairs done (log LR " + fmt(verdict.log_lr) +
                       ", stop at " + fmt(verdict.bound) + ")");
  std::vector<Pick> picks;
  std::vector<std::size_t> order = have_p <= have_c ? std::vector{parent, culprit} : std::vector{culprit, parent};
  for (std::size_t b : order) {
    bool needed = verification_runs(*ctx.data, b) < s.verification_pairs;
    if (needed && !ctx.data->in_flight(b) && static_cast<int>(picks.size()) < std::max(1, s.idle_machines)) {
      picks.push_back({b, 1, true});
    }
  }
  if (picks.empty()) {
    step.trace.push_back("bcb: waiting for in-flight verification runs");
  }
  return picks;
}

// Replication before `found`: the culprit and its parent each need two runs on two boots. The gaussian likelihood
// takes a lone run at face value, so one outlier at a single-run commit can place the step there with P >= 1 - delta
// (seen in the outliers5pct scenario), and runs of one boot share its offset, so two runs of one boot can do the
// same under boot-to-boot variance (boot_offsets: 97.8 % of 600 trials with two runs; see docs/bisect-sim.md).
// The missing run is taken on a fresh boot. False when both have two runs on two boots.
bool replicate_picks(const BcbContext& ctx, std::size_t parent, std::size_t culprit, Step& step) {
  const auto& s = ctx.problem->settings;
  bool missing = false;
  for (std::size_t b : {parent, culprit}) {
    std::set<std::size_t> boots;
    for (const auto& sample : ctx.data->at(b)) {
      boots.insert(sample.boot);
    }
    if (ctx.data->at(b).size() >= 2 && boots.size() >= 2) {
      continue;
    }
    missing = true;
    if (!ctx.data->in_flight(b) && static_cast<int>(step.picks.size()) < std::max(1, s.idle_machines)) {
      step.picks.push_back({b, 1, false, true});
      step.trace.push_back("bcb: " + std::to_string(b) + " has " + std::to_string(boots.size()) +
                           " boot(s); one more run on a fresh boot before naming " + std::to_string(culprit));
    }
  }
  return missing;
}

// The credible set: the 0.95 set, or, when only unpickable commits separate good from bad, the whole segment.
bool set_answer(const BcbContext& ctx, std::size_t culprit, Step& step) {
  double one_minus_delta = 1.0 - ctx.problem->settings.delta;
  std::size_t k = segment_of(ctx.post, culprit);
  if (ctx.post.seg_mass[k] < one_minus_delta) {
    return false;
  }
  std::vector<std::size_t> members;
  for (std::size_t i = ctx.post.bounds[k] + 1; i <= ctx.post.bounds[k + 1]; ++i) {
    if (ctx.prior[i] > 0) {
      members.push_back(i);
    }
    if (i < ctx.post.bounds[k + 1] && ctx.pickable[i]) {
      return false; // something inside can still be tested
    }
  }
  if (members.size() < 2) {
    return false;
  }
  step.verdict = Verdict::ambiguous;
  step.credible_set = members;
  step.trace.push_back("bcb: only untestable commits separate " + std::to_string(ctx.post.bounds[k]) + " and " +
                       std::to_string(ctx.post.bounds[k + 1]) + " (mass " + fmt(ctx.post.seg_mass[k]) +
                       "); the first bad commit could be any of " + std::to_string(members.size()));
  return true;
}

// No change the job cares about: "no change" is the most likely hypothesis and, under the most likely change,
// the 95% interval of the shift lies within +-threshold (raw log values, best component).
// The shift under the most likely change (best component, most likely segment), log values.
ShiftEstimate most_likely_shift(const BcbContext& ctx) {
  const auto& post = ctx.post;
  std::size_t g = static_cast<std::size_t>(std::max_element(post.comp_weight.begin(), post.comp_weight.end()) -
                                           post.comp_weight.begin());
  std::size_t h =
    static_cast<std::size_t>(std::max_element(post.seg_mass.begin(), post.seg_mass.end()) - post.seg_mass.begin());
  return shift_estimate(post.states[g][h], ctx.priors);
}

// A "no change" verdict: no culprit, and the shift of the most likely change with its interval, so that the verdict
// can say how small the change is ("within [-0.8%, +0.6%]").
void set_no_change(const ShiftEstimate& est, Step& step) {
  step.verdict = Verdict::no_change;
  step.culprit.reset();
  step.shift = std::expm1(est.mean);
  step.shift_low = std::expm1(est.low);
  step.shift_high = std::expm1(est.high);
}

bool no_relevant_change(const BcbContext& ctx, Step& step) {
  if (ctx.post.p_none < 0.5) {
    return false;
  }
  auto est = most_likely_shift(ctx);
  double limit = std::log1p(ctx.problem->settings.threshold);
  if (est.low <= -limit || est.high >= limit) {
    return false;
  }
  set_no_change(est, step);
  step.trace.push_back("bcb: no change beyond the threshold: P(no change)=" + fmt(ctx.post.p_none) +
                       ", the most likely shift is within [" + fmt(std::expm1(est.low) * 100) + "%, " +
                       fmt(std::expm1(est.high) * 100) + "%]");
  return true;
}

// Endpoint phase: every endpoint needs a first visit before information gain means anything.
bool endpoint_picks(const BcbContext& ctx, Step& step) {
  const auto& s = ctx.problem->settings;
  int initial = 1;
  std::size_t last = ctx.data->size - 1;
  bool missing = false;
  for (std::size_t e : {std::size_t{0}, last}) {
    std::size_t b = ctx.data->canonical[e];
    if (!ctx.data->at(e).empty()) {
      continue;
    }
    missing = true;
    if (!ctx.data->in_flight(b) && static_cast<int>(step.picks.size()) < std::max(1, s.idle_machines)) {
      step.picks.push_back({b, initial, false});
    }
  }
  if (missing) {
    step.trace.push_back("bcb: measuring the endpoints first (" + std::to_string(initial) + " runs each)");
  }
  return missing;
}

} // namespace

BcbPriors bcb_priors(const Settings& settings) {
  BcbPriors p;
  if (settings.noise && *settings.noise > 0) {
    p.nu0 = std::max(1, settings.noise_runs);
    p.s02 = std::pow(std::log1p(*settings.noise), 2);
  } else {
    p.nu0 = 1;
    p.s02 = 0.05 * 0.05;
  }
  p.kappa0 = 1.0 / 9.0; // shift prior sd: 3 sigma
  if (settings.expected_shift && *settings.expected_shift > -1) {
    // The alert saw this shift: center the prior there with a sd of half its size (at least one sigma).
    p.shift_mean = std::log1p(*settings.expected_shift);
    p.kappa0 = p.s02 / std::max(p.s02, std::pow(0.5 * p.shift_mean, 2));
  }
  p.p_none = 0.1;
  p.components = {{0, 0, std::log(0.7)}, {1, 0, std::log(0.1)}, {0, 0.3, std::log(0.1)}, {1, 0.3, std::log(0.1)}};
  return p;
}

BcbContext make_bcb_context(const Problem& problem, const ChainData& data) {
  BcbContext ctx;
  ctx.problem = &problem;
  ctx.data = &data;
  ctx.priors = bcb_priors(problem.settings);
  // Runs are always weighted by how far they lie from every supported level, with a learned contamination
  // share: on clean data the weights stay near 1, and no single sample switches the model.
  ctx.run_model = learn_run_model(data, std::sqrt(ctx.priors.s02), ctx.priors.nu0);
  ctx.heavy_tailed = looks_heavy_tailed(data);
  ctx.units = make_units(data, ctx.run_model);
  ctx.prior = commit_prior(problem.chain, data, ctx.priors.p_none);
  ctx.post = compute_posterior(ctx.units, ctx.prior, ctx.priors);
  std::size_t n = problem.chain.size();
  ctx.prefix_a.assign(n + 1, 0.0);
  ctx.prefix_b.assign(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double pi = ctx.prior[i];
    ctx.prefix_a[i + 1] = ctx.prefix_a[i] + pi;
    ctx.prefix_b[i + 1] = ctx.prefix_b[i] + (pi > 0 ? pi * std::log(pi) : 0.0);
  }
  ctx.p = per_commit(ctx.post, ctx.prior);
  ctx.cdf.assign(n, 0.0);
  double acc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    acc += ctx.p[i];
    ctx.cdf[i] = acc;
  }
  ctx.pickable = pickable_builds(problem, data);
  return ctx;
}

Step bcb_step(const Problem& problem, const ChainData& data) {
  const auto& s = problem.settings;
  BcbContext ctx = make_bcb_context(problem, data);
  Step step;
  step.runs_used = data.runs;
  step.builds_used = data.builds;
  step.posterior = ctx.p;
  step.p_no_change = ctx.post.p_none;
  auto best = static_cast<std::size_t>(std::max_element(ctx.p.begin(), ctx.p.end()) - ctx.p.begin());
  step.culprit = best;
  step.p_culprit = ctx.p[best];
  step.credible_set = credible_set(ctx.p, 0.95 * (1.0 - ctx.post.p_none));
  step.trace.push_back("bcb: contaminated-normal runs (sigma " + fmt(ctx.run_model.sigma) + ", outlier share " +
                       fmt(ctx.run_model.eps) + (ctx.heavy_tailed ? ", heavy tails seen" : "") + "), " +
                       std::to_string(ctx.units.size()) + " boot units, most likely " + std::to_string(best) +
                       " P=" + fmt(ctx.p[best]) + ", P(no change)=" + fmt(ctx.post.p_none) +
                       ", weight of boot variance " + fmt(boot_weight(ctx)) + ", of drift " + fmt(drift_weight(ctx)));
  if (endpoint_picks(ctx, step)) {
    return step;
  }
  const double one_minus_delta = 1.0 - s.delta;
  if (ctx.post.p_none >= one_minus_delta) {
    set_no_change(most_likely_shift(ctx), step);
    step.trace.push_back("bcb: no change between the endpoints (P=" + fmt(ctx.post.p_none) + ")");
    return step;
  }
  if (no_relevant_change(ctx, step)) {
    return step;
  }
  if (ctx.p[best] >= one_minus_delta) {
    auto parent = parent_of(ctx, best);
    if (parent && replicate_picks(ctx, *parent, data.canonical[best], step)) {
      return step;
    }
    if (parent && s.verification_pairs > 0) {
      fill_shift(ctx, best, step);
      if (auto picks = verification_picks(ctx, *parent, data.canonical[best], step)) {
        step.picks = std::move(*picks);
        return step;
      }
    }
    step.verdict = Verdict::found;
    step.credible_set = {best};
    fill_shift(ctx, best, step);
    step.trace.push_back("bcb: first bad commit " + std::to_string(best) + " with P=" + fmt(ctx.p[best]) + ", shift " +
                         fmt(step.shift * 100) + "% [" + fmt(step.shift_low * 100) + ", " + fmt(step.shift_high * 100) +
                         "]");
    return step;
  }
  if (set_answer(ctx, best, step)) {
    return step;
  }
  if (data.runs >= s.max_runs) {
    step.verdict = Verdict::budget_exhausted;
    step.trace.push_back("bcb: run budget " + std::to_string(s.max_runs) + " spent; reporting the credible set");
    return step;
  }
  step.picks = bcb_search_picks(ctx, step.trace);
  if (step.picks.empty() && s.in_flight.empty()) {
    step.verdict = Verdict::budget_exhausted;
    step.trace.push_back("bcb: nothing left to run within the build budget; reporting the credible set");
  }
  return step;
}

double boot_weight(const BcbContext& ctx) {
  double w = 0;
  for (std::size_t g = 0; g < ctx.post.comp_weight.size(); ++g) {
    w += ctx.priors.components[g].lambda > 0 ? ctx.post.comp_weight[g] : 0.0;
  }
  return w;
}

double drift_weight(const BcbContext& ctx) {
  double w = 0;
  for (std::size_t g = 0; g < ctx.post.comp_weight.size(); ++g) {
    w += ctx.priors.components[g].q > 0 ? ctx.post.comp_weight[g] : 0.0;
  }
  return w;
}

} // namespace bisectd::bisect
