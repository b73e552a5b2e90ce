#include "bisect/bcb_model.hpp"

#include "bisect/bcb_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

namespace bisectd::bisect {

namespace {

constexpr double k_neg_inf = -std::numeric_limits<double>::infinity();

// Kalman update with H = [1, x]; the first observation initializes the flat level exactly (diffuse start).
void observe(FilterState& s, double x, double z, double r) {
  if (!s.started) {
    s.w = z - x * s.d;
    s.pww = r + x * x * s.pdd;
    s.pwd = -x * s.pdd;
    s.started = true;
    return;
  }
  double hw = s.pww + x * s.pwd;
  double hd = s.pwd + x * s.pdd;
  double f = hw + x * hd + r;
  double v = z - (s.w + x * s.d);
  double kw = hw / f;
  double kd = hd / f;
  s.w += kw * v;
  s.d += kd * v;
  s.pww -= kw * hw;
  s.pwd -= kw * hd;
  s.pdd -= kd * hd;
  s.log_f += std::log(f);
  s.quad += v * v / f;
}

void add_unit(FilterState& s, const BcbComponent& g, double x, double n, double mean, double ss) {
  if (s.started) {
    s.pww += g.q;
  }
  observe(s, x, mean, g.lambda + 1.0 / n);
  s.runs += n;
  s.within_ss += ss;
}

// Log marginal likelihood (up to a constant shared by all components and hypotheses). Degrees of freedom:
// every run but one (the flat level w absorbs the first unit); the shift has a proper prior and costs none.
// The sigma prior is on the run-to-run (within-boot) variance in every component: the metric's history
// measures runs within a visit, and boot-to-boot variance comes on top (lambda sigma^2), not out of it.
double log_ml(const FilterState& s, const BcbPriors& p, const BcbComponent& g) {
  double a = p.nu0 * p.s02;
  double dof = p.nu0 + std::max(0.0, s.runs - 1);
  return g.log_prior + 0.5 * p.nu0 * std::log(a) + std::lgamma(dof / 2) - std::lgamma(p.nu0 / 2) - 0.5 * s.log_f -
         0.5 * dof * std::log(a + s.quad + s.within_ss);
}

// Segment masses, no-change mass and component weights from the log marginals lml[g][h] (h == S: no change).
void normalize(BcbPosterior& post, const std::vector<std::vector<double>>& lml, double p_none_prior) {
  std::size_t segs = post.seg_prior.size();
  double mx = k_neg_inf;
  for (const auto& row : lml) {
    for (double v : row) {
      mx = std::max(mx, v);
    }
  }
  post.seg_mass.assign(segs, 0.0);
  post.comp_weight.assign(lml.size(), 0.0);
  post.joint.assign(lml.size(), std::vector<double>(segs + 1, 0.0));
  post.p_none = 0;
  double z = 0;
  for (std::size_t g = 0; g < lml.size(); ++g) {
    for (std::size_t h = 0; h <= segs; ++h) {
      double pr = h < segs ? post.seg_prior[h] : p_none_prior;
      double m = pr * std::exp(lml[g][h] - mx);
      post.joint[g][h] = m;
      (h < segs ? post.seg_mass[h] : post.p_none) += m;
      post.comp_weight[g] += m;
      z += m;
    }
  }
  if (z <= 0) {
    return;
  }
  for (auto& m : post.seg_mass) {
    m /= z;
  }
  for (auto& w : post.comp_weight) {
    w /= z;
  }
  for (auto& row : post.joint) {
    for (auto& m : row) {
      m /= z;
    }
  }
  post.p_none /= z;
}

double range_sum(const std::vector<double>& prefix, std::size_t lo, std::size_t hi) { return prefix[hi] - prefix[lo]; }

} // namespace

std::vector<double> commit_prior(const std::vector<Candidate>& chain, const ChainData& data, double p_none) {
  std::vector<double> prior(chain.size(), 0.0);
  double total = 0;
  for (std::size_t i = 1; i < chain.size(); ++i) {
    bool identical_to_parent = data.canonical[i] == data.canonical[i - 1];
    prior[i] = identical_to_parent ? 0.0 : std::max(0.0, chain[i].prior);
    total += prior[i];
  }
  if (total > 0) {
    for (auto& p : prior) {
      p *= (1.0 - p_none) / total;
    }
  }
  return prior;
}

namespace {

// The upper middle value (not bisect::median's mean of the two middle ones): what the robust weights were
// measured with.
double upper_median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

double median_y(const std::vector<LogSample>& runs) {
  std::vector<double> ys;
  for (const auto& s : runs) {
    ys.push_back(s.y);
  }
  return upper_median(std::move(ys));
}

// Robust sigma of the runs within builds (1.4826 MAD of the residuals from the build mean, builds with >= 3
// runs, scaled by sqrt(n/(n-1))); 0 when there are fewer than 15 such residuals.
double within_build_sigma(const ChainData& data, std::vector<double>* residuals) {
  std::vector<double> resid;
  for (const auto& build : data.by_build) {
    if (build.size() < 3) {
      continue;
    }
    double n = static_cast<double>(build.size());
    double mean = 0;
    for (const auto& s : build) {
      mean += s.y / n;
    }
    for (const auto& s : build) {
      resid.push_back(std::abs(s.y - mean) * std::sqrt(n / (n - 1)));
    }
  }
  if (residuals != nullptr) {
    *residuals = resid;
  }
  return resid.size() < 15 ? 0.0 : 1.4826 * upper_median(resid);
}

// Weight of a run whose residual is `z` sigmas: the posterior probability that it comes from the regular part of
// a contaminated normal (a share `eps` of runs from a component 5 times as wide), the EM weight of that model.
// With eps = 5 %: about 1 within 2 sigmas, 0.5 at 3, 0.04 at 4; with eps = 1 %: 0.87 at 3, 0.2 at 4.
double regular_weight(double z, double eps) {
  constexpr double wide = 5.0;
  double regular = (1 - eps) * std::exp(-0.5 * z * z);
  double outlier = eps / wide * std::exp(-0.5 * z * z / (wide * wide));
  return regular / (regular + outlier);
}

// Each run's distance (log units) from the level it should lie near: its build's median when the build has >= 3
// runs, else the nearer of the endpoints' medians (the two levels any run should be near); the side of a single
// run is unknown, so only distance from both levels counts against it. Infinity: no level to compare with.
std::vector<std::vector<double>> run_distances(const ChainData& data) {
  std::vector<std::vector<double>> out(data.by_build.size());
  std::vector<double> levels;
  for (std::size_t e : {std::size_t{0}, data.size - 1}) {
    if (!data.at(e).empty()) {
      levels.push_back(median_y(data.at(e)));
    }
  }
  for (std::size_t b = 0; b < data.by_build.size(); ++b) {
    const auto& build = data.by_build[b];
    const std::vector<double> refs = build.size() >= 3 ? std::vector<double>{median_y(build)} : levels;
    for (const auto& s : build) {
      double dist = std::numeric_limits<double>::infinity();
      for (double r : refs) {
        dist = std::min(dist, std::abs(s.y - r));
      }
      out[b].push_back(dist);
    }
  }
  return out;
}

// Per-run weights under `model`; weight 1 where there is no level to compare with.
std::vector<std::vector<double>> run_weights(const std::vector<std::vector<double>>& dist, const RunModel& model) {
  std::vector<std::vector<double>> w(dist.size());
  for (std::size_t b = 0; b < dist.size(); ++b) {
    for (double d : dist[b]) {
      w[b].push_back(model.sigma > 0 && std::isfinite(d) ? regular_weight(d / model.sigma, model.eps) : 1.0);
    }
  }
  return w;
}

// Prior of the contamination share: Beta(0.25, 49.75), mean 0.5 %, worth 50 runs. Measured (bisect-sim, target
// row 300 trials, outliers 100): mean 1 % gave the same target row and 32.7 vs 31.3 runs on outliers; a prior
// of ~0 (weights ~1 on clean data) saves the target row 2 % (26.4 vs 27.0 runs) but is no robust model.
constexpr double k_eps_a = 0.25, k_eps_b = 49.75;
// Asymptotic efficiency of the MAD against the standard deviation under gaussian noise.
constexpr double k_mad_efficiency = 0.37;

} // namespace

RunModel learn_run_model(const ChainData& data, double prior_sigma, double prior_runs) {
  RunModel m;
  std::vector<double> resid;
  (void)within_build_sigma(data, &resid);
  // The robust sigma of the within-build residuals, pooled with the history's sigma by their weights (a MAD is
  // worth about 37 % of its count in degrees of freedom), so that the scale moves smoothly as residuals arrive
  // instead of switching on at some count and re-scoring every run at once. Without a prior, 15 residuals at least.
  double prior_w = prior_sigma > 0 ? std::max(0.0, prior_runs) : 0.0;
  bool data_usable = !resid.empty() && (prior_w > 0 || resid.size() >= 15);
  double data_w = data_usable ? k_mad_efficiency * static_cast<double>(resid.size()) : 0.0;
  double data_var = data_usable ? std::pow(1.4826 * upper_median(resid), 2) : 0.0;
  if (prior_w + data_w > 0) {
    m.sigma = std::sqrt((prior_w * prior_sigma * prior_sigma + data_w * data_var) / (prior_w + data_w));
  }
  // The contamination share by EM with the Beta(k_eps_a, k_eps_b) prior: every run's
  // probability of being an outlier counts, so the share grows by a fraction of a run per wild run.
  auto dist = run_distances(data);
  double runs = 0;
  for (const auto& row : dist) {
    runs += static_cast<double>(row.size());
  }
  m.eps = k_eps_a / (k_eps_a + k_eps_b);
  for (int iter = 0; iter < 8 && m.sigma > 0; ++iter) {
    double outlying = 0;
    for (const auto& row : run_weights(dist, m)) {
      for (double w : row) {
        outlying += 1 - w;
      }
    }
    m.eps = (k_eps_a + outlying) / (k_eps_a + k_eps_b + runs);
  }
  return m;
}

std::vector<BcbUnit> make_units(const ChainData& data, bool robust) {
  RunModel model;
  if (robust) {
    model = learn_run_model(data, 0, 0);
  }
  return make_units(data, model);
}

std::vector<BcbUnit> make_units(const ChainData& data, const RunModel& model) {
  std::vector<std::vector<double>> weights = run_weights(run_distances(data), model);
  struct Run {
    double y, t, w;
  };
  std::map<std::pair<std::size_t, std::size_t>, std::vector<Run>> groups; // (build, boot)
  for (std::size_t b = 0; b < data.by_build.size(); ++b) {
    for (std::size_t i = 0; i < data.by_build[b].size(); ++i) {
      const auto& s = data.by_build[b][i];
      groups[{b, s.boot}].push_back({s.y, static_cast<double>(s.seq), weights[b][i]});
    }
  }
  std::vector<BcbUnit> units;
  for (const auto& [key, runs] : groups) {
    BcbUnit u;
    u.pos = key.first;
    double wsum = 0, wysum = 0, ysum = 0, tsum = 0;
    for (const auto& r : runs) {
      wsum += r.w;
      wysum += r.w * r.y;
      ysum += r.y;
      tsum += r.t;
    }
    // The mean is the weighted mean of the unit's own runs, whatever their weight: dividing by a floored weight
    // instead drags a unit of outliers only (weights ~1e-8) to a mean near 0 in log units, a "run" ~14 log units
    // away whose squared error then swamps the sigma estimate of every hypothesis alike (issue #31's stall). With
    // every weight 0 (underflow), the plain mean.
    u.mean = wsum > 0 ? wysum / wsum : ysum / static_cast<double>(runs.size());
    u.n = std::max(wsum, 1e-3); // a unit of outliers only still says (almost) nothing, but stays a unit
    u.time = tsum / static_cast<double>(runs.size());
    for (const auto& r : runs) {
      u.ss += r.w * (r.y - u.mean) * (r.y - u.mean);
    }
    units.push_back(u);
  }
  std::stable_sort(units.begin(), units.end(), [](const BcbUnit& a, const BcbUnit& b) { return a.time < b.time; });
  return units;
}

// A within-build residual this many robust sigmas out marks the data heavy-tailed. A gaussian lab's largest of
// ~60 residuals passes 4.5 sigmas in about 0.04 % of bisections; 5 % outliers at 5 sigma pass it within the
// alert's runs in about half of them. (Measured on the outliers row: 6 -> 4.5 took 38.6 -> 36.6 mean runs, 4
// gave 34.3 but 98 % accuracy.)
constexpr double k_heavy_tail_z = 4.5;

double within_build_sigma(const ChainData& data) { return within_build_sigma(data, nullptr); }

bool looks_heavy_tailed(const ChainData& data) {
  // Residuals from the build mean: free of any split error, and unlike median residuals never exactly zero
  // (which would shrink the MAD).
  std::vector<double> resid;
  double s = within_build_sigma(data, &resid);
  return s > 0 && *std::max_element(resid.begin(), resid.end()) > k_heavy_tail_z * s;
}

BcbPosterior compute_posterior(const std::vector<BcbUnit>& units, const std::vector<double>& prior,
                               const BcbPriors& priors) {
  BcbPosterior post;
  post.last = prior.size() - 1;
  post.bounds = {0, post.last};
  for (const auto& u : units) {
    post.bounds.push_back(u.pos);
  }
  std::sort(post.bounds.begin(), post.bounds.end());
  post.bounds.erase(std::unique(post.bounds.begin(), post.bounds.end()), post.bounds.end());
  std::vector<double> prefix(prior.size() + 1, 0.0);
  std::partial_sum(prior.begin(), prior.end(), prefix.begin() + 1);
  std::size_t segs = post.bounds.size() - 1;
  for (std::size_t k = 0; k < segs; ++k) {
    post.seg_prior.push_back(range_sum(prefix, post.bounds[k] + 1, post.bounds[k + 1] + 1));
  }
  std::vector<std::vector<double>> lml(priors.components.size(), std::vector<double>(segs + 1));
  post.states.assign(priors.components.size(), std::vector<FilterState>(segs + 1));
  for (std::size_t g = 0; g < priors.components.size(); ++g) {
    for (std::size_t h = 0; h <= segs; ++h) {
      FilterState& s = post.states[g][h];
      s.pdd = 1.0 / priors.kappa0;
      s.d = priors.shift_mean;
      for (const auto& u : units) {
        double x = h < segs && u.pos > post.bounds[h] ? 1.0 : 0.0;
        add_unit(s, priors.components[g], x, u.n, u.mean, u.ss);
      }
      lml[g][h] = log_ml(s, priors, priors.components[g]);
    }
  }
  normalize(post, lml, priors.p_none);
  return post;
}

double posterior_entropy(const BcbPosterior& post, const std::vector<double>& prefix_a,
                         const std::vector<double>& prefix_b) {
  double h = 0;
  for (std::size_t k = 0; k < post.seg_mass.size(); ++k) {
    double a = range_sum(prefix_a, post.bounds[k] + 1, post.bounds[k + 1] + 1);
    if (a <= 0 || post.seg_mass[k] <= 0) {
      continue;
    }
    double f = post.seg_mass[k] / a;
    h -= f * (range_sum(prefix_b, post.bounds[k] + 1, post.bounds[k + 1] + 1) + a * std::log(f));
  }
  if (post.p_none > 0) {
    h -= post.p_none * std::log(post.p_none);
  }
  return h;
}

double entropy_after(const BcbPosterior& post, const std::vector<double>& prefix_a, const std::vector<double>& prefix_b,
                     const BcbPriors& priors, std::size_t pos, double n, double mean) {
  BcbPosterior next;
  next.last = post.last;
  std::size_t segs = post.seg_prior.size();
  auto it = std::lower_bound(post.bounds.begin(), post.bounds.end(), pos);
  bool split = it == post.bounds.end() || *it != pos;
  std::size_t split_seg = split ? static_cast<std::size_t>(it - post.bounds.begin()) - 1 : segs;
  // Built by appending (GCC 12 warns falsely about vector::insert here at -O2).
  next.bounds.reserve(post.bounds.size() + 1);
  for (std::size_t k = 0; k < post.bounds.size(); ++k) {
    next.bounds.push_back(post.bounds[k]);
    if (split && k == split_seg) {
      next.bounds.push_back(pos);
    }
  }
  std::size_t new_segs = next.bounds.size() - 1;
  for (std::size_t k = 0; k < new_segs; ++k) {
    next.seg_prior.push_back(range_sum(prefix_a, next.bounds[k] + 1, next.bounds[k + 1] + 1));
  }
  std::vector<std::vector<double>> lml(priors.components.size(), std::vector<double>(new_segs + 1));
  for (std::size_t g = 0; g < priors.components.size(); ++g) {
    for (std::size_t h = 0; h <= new_segs; ++h) {
      // Map the new hypothesis to the old state it extends; a split segment's halves share the old state.
      std::size_t old_h = h == new_segs ? segs : (split && h > split_seg ? h - 1 : h);
      FilterState s = post.states[g][old_h];
      double x = h < new_segs && pos > next.bounds[h] ? 1.0 : 0.0;
      add_unit(s, priors.components[g], x, n, mean, 0.0);
      lml[g][h] = log_ml(s, priors, priors.components[g]);
    }
  }
  normalize(next, lml, priors.p_none);
  return posterior_entropy(next, prefix_a, prefix_b);
}

std::vector<double> per_commit(const BcbPosterior& post, const std::vector<double>& prior) {
  std::vector<double> out(prior.size(), 0.0);
  for (std::size_t k = 0; k < post.seg_mass.size(); ++k) {
    if (post.seg_prior[k] <= 0) {
      continue;
    }
    for (std::size_t i = post.bounds[k] + 1; i <= post.bounds[k + 1]; ++i) {
      out[i] = prior[i] * post.seg_mass[k] / post.seg_prior[k];
    }
  }
  return out;
}

std::vector<double> nig_split_log_ml(const std::vector<std::array<double, 3>>& groups, double nu0, double s02) {
  std::vector<std::array<double, 3>> pre(groups.size() + 1, {0, 0, 0});
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (int j = 0; j < 3; ++j) {
      pre[i + 1][j] = pre[i][j] + groups[i][j];
    }
  }
  const auto& tot = pre.back();
  std::vector<double> out;
  for (std::size_t k = 0; k + 1 < groups.size(); ++k) {
    auto [nb, sb, qb] = pre[k + 1];
    double na = tot[0] - nb, sa = tot[1] - sb, qa = tot[2] - qb;
    double ss = std::max(0.0, (qb - sb * sb / nb) + (qa - sa * sa / na));
    out.push_back(-0.5 * std::log(nb) - 0.5 * std::log(na) - 0.5 * (tot[0] - 2 + nu0) * std::log(nu0 * s02 + ss));
  }
  return out;
}

ShiftEstimate shift_estimate(const FilterState& state, const BcbPriors& priors) {
  double s2 = (priors.nu0 * priors.s02 + state.quad + state.within_ss) / std::max(1.0, priors.nu0 + state.runs - 2);
  double half = t_quantile_975(std::max(1.0, priors.nu0 + state.runs - 2)) * std::sqrt(std::max(0.0, state.pdd * s2));
  return {state.d, state.d - half, state.d + half};
}

} // namespace bisectd::bisect
