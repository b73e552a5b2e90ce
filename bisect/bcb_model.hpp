#pragma once
// BCB's statistical model: the posterior over "first bad commit" c (plus "no change") from all samples.
//
// Samples are summarized per boot unit (runs of one boot at one build): y = log(value), runs weighted by how far
// they lie from every supported level in the robust variant. For a hypothesis c, a unit at position p has x = [p >= c]
// and
//   mean_j = w(t_j) + x * delta + e_j,   e_j ~ N(0, sigma^2 (lambda + 1/n_j)),   w(t+1) = w(t) + N(0, q sigma^2)
// with sigma^2 ~ scaled-inv-chi2(nu0, s0^2) (from the metric's history when known), delta | sigma ~ N(0,
// sigma^2 / kappa0), w flat. lambda is the boot-to-boot variance and q the drift per visit, both relative to the
// run-to-run variance; a small grid of (lambda, q) components is averaged by its exact marginal likelihood, so
// drift and boot offsets are used only when the data show them. Every (component, hypothesis) marginal is exact:
// a two-state Kalman filter (level w, shift delta) with sigma^2 integrated out. For q = 0 and lambda = 0 this is
// the closed-form NIG split likelihood (nig_split_log_ml, prefix sums), which the tests cross-check.
// Commits between two probed positions share one likelihood, so hypotheses are segments, not commits.

#include "bisect/engine.hpp"
#include "bisect/engine_data.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace bisectd::bisect {

struct BcbUnit {
  std::size_t pos = 0;            // chain position (canonical build)
  double n = 0, mean = 0, ss = 0; // runs, mean of y, within-unit sum of squares
  double time = 0;                // mean seq, for ordering
};

struct BcbComponent {
  double lambda = 0, q = 0, log_prior = 0;
};

struct BcbPriors {
  double nu0 = 1, s02 = 0.0025, kappa0 = 1.0 / 9.0, p_none = 0.1;
  double shift_mean = 0; // prior mean of delta (log units) under every change hypothesis
  std::vector<BcbComponent> components;
};

// Filter state of one (component, hypothesis): mean and covariance of (w, delta) in sigma^2 units, plus the
// accumulated log-determinant and quadratic form of the prediction errors.
struct FilterState {
  double w = 0, d = 0, pww = 1e8, pwd = 0, pdd = 9;
  double log_f = 0, quad = 0, runs = 0, within_ss = 0;
  bool started = false;
};

struct BcbPosterior {
  std::size_t last = 0;            // chain index of the bad endpoint
  std::vector<std::size_t> bounds; // 0 = b_0 < ... < b_S = last; segment k holds c in (b_k, b_{k+1}]
  std::vector<double> seg_prior;   // prior mass per segment (sums to 1 - p_none prior)
  std::vector<double> seg_mass;    // posterior mass per segment
  double p_none = 0;
  std::vector<double> comp_weight;              // posterior weight per component
  std::vector<std::vector<double>> joint;       // [component][segment or S = no change]: posterior mass
  std::vector<std::vector<FilterState>> states; // [component][segment]; index S is "no change"
};

// The per-commit prior: Candidate.prior for c >= 1, zero for chain[0] and for commits whose build is identical
// to their parent's (same canonical build); normalized to sum 1 - p_none. Zero everywhere if all are zero.
std::vector<double> commit_prior(const std::vector<Candidate>& chain, const ChainData& data, double p_none);

// How runs are weighted: each by the probability that it is a regular run of a contaminated normal (a share eps
// of runs 5 times as wide) at run sigma `sigma` (log units), judged by its distance from its build's median (builds
// of >= 3 runs) or else from the nearer endpoint median. sigma 0: every run weighs 1.
struct RunModel {
  double sigma = 0, eps = 0.005;
};

// Learns the run model from the data, always (there is no switch between a gaussian and a robust model: a switch
// re-scores every past run at once when one sample flips it): sigma is the robust within-build sigma pooled with
// `prior_sigma` (worth `prior_runs` runs), eps the EM estimate under a Beta prior of mean 0.5 %. Both move by a
// bounded amount per sample, and so does every run's weight.
RunModel learn_run_model(const ChainData& data, double prior_sigma, double prior_runs);

// Boot units from the grouped samples, ordered by time, runs weighted by `model`: a unit's n is its summed weight.
std::vector<BcbUnit> make_units(const ChainData& data, const RunModel& model);

// The same with the model learned from the data alone (robust) or every run weighing 1 (not robust).
std::vector<BcbUnit> make_units(const ChainData& data, bool robust);

// True when the log residuals within builds (builds with >= 3 runs, at least 15 residuals) look heavy-tailed:
// some |r| > 4.5 robust sigmas (1.4826 MAD). Within-build residuals cannot be faked by a wrong split.
bool looks_heavy_tailed(const ChainData& data);

// Robust run-to-run sigma of the log values within builds (1.4826 MAD of the residuals from the build means,
// builds with >= 3 runs); 0 with fewer than 15 such residuals.
double within_build_sigma(const ChainData& data);

// Exact model-averaged posterior over segments and "no change".
BcbPosterior compute_posterior(const std::vector<BcbUnit>& units, const std::vector<double>& prior,
                               const BcbPriors& priors);

// Adds one unit (n runs with mean `mean`) at the end of time at chain position `pos` and returns the new
// posterior's entropy over commits (+ no change) without rebuilding from scratch: O(components x segments).
double entropy_after(const BcbPosterior& post, const std::vector<double>& prefix_a, const std::vector<double>& prefix_b,
                     const BcbPriors& priors, std::size_t pos, double n, double mean);

// Entropy (nats) of a posterior given prefix sums of prior (a) and prior*log(prior) (b) over the chain.
double posterior_entropy(const BcbPosterior& post, const std::vector<double>& prefix_a,
                         const std::vector<double>& prefix_b);

// Expands segment masses to P(first bad = i) per commit.
std::vector<double> per_commit(const BcbPosterior& post, const std::vector<double>& prior);

// Closed-form NIG log marginal likelihood (up to a constant) of every split between consecutive groups of
// `groups` (each: {n, sum, sum of squares}), via prefix sums; out[k] = first k+1 groups before, rest after.
// The model of the lambda = q = 0 component with a flat prior on both levels (kappa0 -> 0).
std::vector<double> nig_split_log_ml(const std::vector<std::array<double, 3>>& groups, double nu0, double s02);

// Posterior mean and 95% interval of delta (log shift) under one component and segment.
struct ShiftEstimate {
  double mean = 0, low = 0, high = 0;
};
ShiftEstimate shift_estimate(const FilterState& state, const BcbPriors& priors);

} // namespace bisectd::bisect
