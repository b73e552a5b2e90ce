#pragma once
// Internals of the detector shared by detect*.cpp (not a public API).

#include "bisect/detect.hpp"

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace bisectd::bisect::detail {

struct MachineValue {
  int machine = 0;  // index into the series' machines
  double value = 0; // that machine's level at this commit, its offset removed
};

struct PreparedSeries {
  std::vector<double> values;      // level of each point with finite samples; points without any are skipped
  std::vector<std::size_t> origin; // index in the input series of each value
  // Per value, the machines that measured it (empty for every value when the series names no machines).
  std::vector<std::vector<MachineValue>> by_machine;
  int machines = 0; // distinct machines named (0: unlabelled series)
  // Variance per point of a random-walk lab level (local-level model, detect_level.cpp); 0 when the level
  // does not wander. The window gate adds its effect on the window medians to their noise.
  double wander = 0;
};
// Without the lab model: each value is the median of the point's finite samples (the detector before the
// lab model). With it (detect_model.cpp): noisy boots dropped, machine offsets removed, per-boot medians
// averaged. `lab` (optional) receives the estimates.
PreparedSeries prepare(const std::vector<SeriesPoint>& series, bool lab_model, LabEstimate* lab = nullptr);

// Two modes of the run noise (detect_mixture.cpp): a minority `share` of runs lies `gap` (relative, signed)
// from the usual level; `sigma` is the relative run sigma within a mode.
struct RunMixture {
  bool found = false;
  double share = 0, gap = 0, sigma = 0;
};
// Fitted on the differences between runs of one boot (each vector: one boot's runs); found only when two modes
// explain them far better than one.
RunMixture fit_run_mixture(const std::vector<std::vector<double>>& boots);
// Level of the usual mode from one boot's runs (maximum likelihood under `m`); their median when none found.
double mixture_level(std::span<const double> runs, const RunMixture& m);

// Values minus the median of their segment between change points.
std::vector<double> residuals(std::span<const double> y, const std::vector<std::size_t>& cps);
// The strongest sinusoid of the residuals (period >= min_period, >= 3 cycles in the series), per value, or
// empty when it explains no more than noise of sigma could at 1e-3 (detect_level.cpp).
std::vector<double> periodic_component(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma,
                                       std::size_t min_period);
// Random-walk variance per point of the residuals' level: from the robust variogram at lag min(64, n/6) against
// lag 1, 0 unless their ratio exceeds min_ratio.
double wander_variance(std::span<const double> y, const std::vector<std::size_t>& cps, double min_ratio);
// Random-walk variance per point of the level between change points cps (the level restarts at each): maximum
// likelihood of the local-level model, 0 unless its likelihood ratio against a constant level reaches min_lr.
double local_level_wander(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma,
                          double min_lr);

// Likelihood ratio of the local-level model (its maximum-likelihood walk) against a constant level on y, the
// level restarting at cps: how much more a wandering level explains than steps alone.
double local_level_lr(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma);

// Twice the log-likelihood of constant levels between cps (the local-level model without walk), noise variance
// concentrated out: differences of it between change-point sets are likelihood ratios.
double constant_level_2ll(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma);

// The long-segment pass (detect_long.cpp). Binary segmentation of a change in mean inside each segment between
// cps, on points clipped at 3.5 sigma around a running median: a segment is split at its best position when the
// squared Welch z of the two sides' means (each side's noise from its successive differences) reaches
// `penalty`, and both parts are searched again. Splits leave at least min_side points either side.
std::vector<std::size_t> long_splits(std::span<const double> y, const std::vector<std::size_t>& cps, double sigma,
                                     std::size_t min_side, double penalty);

// Step against ramp around a change at pos of window y (detect_ramp.cpp), in sigma^2 of residual sum of squares:
// `advantage`: how much better a continuous ramp of at least min_ramp points straddling pos fits than a step
// near pos (0 when the step fits best); `jump_given_ramp` (computed only when advantage > 0): how much a step
// near pos still improves the best ramp's fit.
struct RampTest {
  double advantage = 0, jump_given_ramp = 0;
};
RampTest ramp_test(std::span<const double> y, std::size_t pos, double sigma, std::size_t min_ramp);

// The gates evaluated at one change point `pos` between its neighbours lo and hi (segment [lo, hi)).
struct Gate {
  bool pass = false;
  double before = 0, after = 0; // window medians
  double relative_change = 0;
  double effect = 0; // |after - before| / sigma
  double p_value = 1;
  std::size_t n_left = 0, n_right = 0;
  std::size_t machines = 0; // machines with >= 3 points on each side (lab model)
};
// Compares y[max(lo, pos-W), pos) with y[pos, min(hi, pos+W)), W = options.max_window, y = p.values. With the
// lab model, also the abruptness gate (the nearest min_segment points either side) and the machine gate.
// level_window (0: max_window) sets the points either side for the levels, the rank test and the k_sigma and
// relative-change gates; the lab gates always use max_window.
Gate evaluate_gate(const PreparedSeries& p, std::size_t lo, std::size_t pos, std::size_t hi, double sigma,
                   const DetectOptions& options, std::size_t level_window = 0);

// The long-segment pass for a series whose level is steady between its change points cps (prepared indices,
// `gates` theirs, judged with `options`): adds the long_splits between them that pass the gates over the whole
// segments either side (DetectOptions::long_segments), keeping every change point's gates passing.
void add_long_changes(const PreparedSeries& p, double sigma, const DetectOptions& options,
                      std::vector<std::size_t>& cps, std::vector<Gate>& gates);

// Split in [from, to] maximizing the standardised rank CUSUM (Pettitt's |U_t| / sd) over y[lo, hi); `current` when from
// > to.
std::size_t best_rank_split(std::span<const double> y, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to,
                            std::size_t current);

// Splits t in [from, to] whose standardised rank CUSUM z_t over y[lo, hi) satisfies z_t^2 >= z_best^2 - drop:
// the plausible positions of the change (first and last, inclusive).
std::pair<std::size_t, std::size_t> rank_split_range(std::span<const double> y, std::size_t lo, std::size_t hi,
                                                     std::size_t from, std::size_t to, double drop);

} // namespace bisectd::bisect::detail
