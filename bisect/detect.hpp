#pragma once
// Shift detection on a benchmark series (one metric, tested commits in first-parent order): change points,
// a per-metric noise model, and the two-commit confirmation run before a bisection is opened.
// Method and calibration: docs/detect-sim.md (measured with bench/detect-sim).

#include <cstddef>
#include <string>
#include <vector>

namespace bisectd::bisect {

// Where one sample was measured. Both fields are optional: "" means unknown. Samples with the same non-empty
// machine share a per-machine offset; samples with the same non-empty boot share one boot's level and spread.
struct SampleOrigin {
  std::string machine; // lab machine (box) that ran the benchmark
  std::string boot;    // boot of that machine (any id unique per boot, e.g. the kernel's boot_id)
};

struct SeriesPoint {
  std::string id;                      // commit id (any text; copied into the change point)
  std::vector<double> samples;         // the runs of this commit; NaN/inf runs and points without runs are ignored
  std::vector<SampleOrigin> origins{}; // parallel to samples, or empty when the lab is unknown (old inputs)
};

enum class ShiftDirection { up, down };

struct DetectOptions {
  double min_relative_change = 0.01; // gate: |after/before - 1| >= this (the job threshold)
  double k_sigma = 1.0;              // gate: |after - before| >= k * sigma_hat (point-level noise of the series)
  double max_p_value = 1e-4;         // gate: Mann-Whitney U p-value between the two windows
  int min_segment = 8;               // points needed on each side; a change nearer the tip stays pending
  int max_window = 50;               // points per side used for levels and the rank test (>= min_segment)
  // Lab model (docs/detect-sim.md): remove per-machine offsets and noisy boots before judging, and require a
  // change to be abrupt (seen between the nearest min_segment points too, so slow drift, ramps and seasonal
  // load are not change points) and, where several machines measured both sides, seen on each of them.
  bool lab_model = true;
  // Abruptness gate of the lab model: the median jump between the nearest min_segment points either side must
  // reach abrupt_z standard errors and carry at least half (a quarter when abrupt_z < 2) of the windows'
  // difference, and local lines fitted either side must not meet at the change (a ramp): their gap must reach
  // 1.5 (1.0 when abrupt_z < 2) standard errors. Negative: chosen per series (docs/detect-sim.md): a periodic
  // load component is removed first; then 0.5 with max_window, unless the level still wanders between the
  // change points found (robust variogram of the residuals at lag min(64, n/6) above 1.3x lag 1): then 2.5 with
  // windows of at most 25 points, the level's random-walk variance added to the window gate's noise.
  double abrupt_z = -1;
  // Long-segment pass of the lab model (abrupt_z < 0, when the level does not wander): inside the segments
  // between the change points found, a split by binary segmentation is also a change point when the whole
  // segments either side (not max_window points) pass the gates, with long_k_sigma in place of k_sigma (their
  // levels are known far better than a window's), a step explains them clearly better than a random-walk
  // level, and no ramp fits better. Every other gate (rank test, relative change, abruptness) is as above.
  bool long_segments = true;
  double long_k_sigma = 0.5;
};

struct ChangePoint {
  std::size_t index = 0;                         // position of the first point AFTER the change (0-based in the input)
  std::string id;                                // series[index].id
  ShiftDirection direction = ShiftDirection::up; // of the metric value (up = higher)
  double relative_change = 0;                    // (after - before) / |before|
  double confidence = 0;                         // P(a real change within ±5 commits of index): see docs/detect-sim.md
  double p_value = 1;                            // Mann-Whitney U between the windows either side
  double before = 0;        // median of the points before (<= max_window, after the previous change point)
  double after = 0;         // median of the points after (<= max_window, before the next change point)
  double sigma = 0;         // sigma_hat of the series (same units as the values)
  std::size_t machines = 0; // machines that measured both sides of the change (0: series without machines)
  // Plausible positions of the change (inclusive, input indices): bisect from the point before range_begin
  // to range_end. Where the rank-CUSUM z^2 is within 6 of its maximum (coverage: docs/detect-sim.md).
  std::size_t range_begin = 0, range_end = 0;
};

// Change points of `series` (each point's value = median of its samples), both directions, sorted by index.
// Every returned point passes all gates of `options`.
std::vector<ChangePoint> detect_change_points(const std::vector<SeriesPoint>& series, const DetectOptions& options);

// The lab effects the detector removes before judging change points (detect_model.cpp).
struct LabEstimate {
  struct Machine {
    std::string name;
    double offset = 0;       // added to this machine's samples relative to the reference (first) machine
    std::size_t commits = 0; // commits it measured
  };
  std::vector<Machine> machines; // the reference machine (most commits) first, offset 0; empty if unlabelled
  std::size_t boots = 0;         // boots with >= 2 samples (spread measurable)
  std::size_t noisy_boots = 0;   // of them, boots whose run spread exceeds 4x the median boot spread: ignored
                                 // where the commit has another boot
};

// Machine offsets and noisy boots of `series` as the detector estimates them (for reports and tests).
LabEstimate estimate_lab(const std::vector<SeriesPoint>& series);

struct NoiseEstimate {
  std::size_t commits = 0;    // points with at least one sample
  std::size_t runs = 0;       // samples in total
  double run_sigma = 0;       // robust relative run-to-run sigma (within a commit)
  double commit_sigma = 0;    // robust relative commit-to-commit jitter (steps removed, run noise subtracted)
  double point_sigma = 0;     // robust relative sigma of the per-commit medians (what the detector sees)
  double runs_per_commit = 0; // mean samples per commit
  bool heavy_tailed = false;  // > 1% of within-commit run pairs differ by more than 5 sigma
  bool bimodal = false;       // runs split into two clusters (minority >= 10%, Ashman's D > 3.2)
  // Runs per commit needed for the detector to see `relative_shift` (e.g. 0.02): enough that the shift is
  // >= 3 point sigmas, where bench/detect-sim measures recall >= 0.9. -1 when the commit jitter alone exceeds
  // shift/3 (more runs cannot help) or the shift is 0; 1 when there is no measured noise. Sign is ignored.
  int runs_for(double relative_shift) const;
  // Runs per side for confirm_shift to confirm `relative_shift` with 90% power at two-sided alpha 0.01
  // (normal approximation of the rank test on the run noise, Pitman efficiency 3/pi); at least 5.
  int confirm_runs_for(double relative_shift) const;
};

// Learns the noise model of one metric from its history (steps found by detect_change_points are removed).
NoiseEstimate estimate_noise(const std::vector<SeriesPoint>& series);

struct ShiftTest {
  double relative_change = 0; // (median(after) - median(before)) / |median(before)|
  double p_value = 1;         // two-sided Mann-Whitney U
  bool lkp_changed = false;   // LKP's non-overlap rule (lib/changed_stat.rb) and ratio > 1.01
  bool confirmed = false;
};

// LKP's default "changed" rule (intel/lkp-tests lib/stats.rb, lib/changed_stat.rb): after trimming n>>5
// (at most 3) values per end, the head runs lie clear of the base runs (min_head > median_base and
// median_head > max_base, or the mirror), with median = sorted[n/2], and the median ratio exceeds 1.01.
// Needs >= 3 runs on at least one side.
bool lkp_changed(const std::vector<double>& base, const std::vector<double>& head);

// Confirmation between two commits measured interleaved (>= 5 runs each): confirmed when
// |change| >= min_relative_change and (U p < 0.01 or lkp_changed), with the rank test agreeing in direction.
ShiftTest confirm_shift(const std::vector<double>& before, const std::vector<double>& after,
                        double min_relative_change);

} // namespace bisectd::bisect
