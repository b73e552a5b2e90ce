#pragma once
// Baseline detectors the project's detector must beat. Each returns the indices of the first point after
// each change it reports (same convention as bisect::ChangePoint::index).

#include "bisect/detect.hpp"

#include <cstddef>
#include <vector>

namespace bisectd::bench {

// Fixed threshold: |median(next 5 commit medians) / median(previous 5) - 1| >= threshold, one report per
// local maximum (±5 commits) of that ratio. What a dashboard with a fixed "alert at N%" rule does.
std::vector<std::size_t> fixed_threshold_rule(const std::vector<bisect::SeriesPoint>& series, double threshold);

// LKP: each commit's runs against the runs of the 3 preceding commits (LKP wants >= 9 base runs) with
// bisect::lkp_changed; consecutive reports within 3 commits collapse into the first.
std::vector<std::size_t> lkp_rule(const std::vector<bisect::SeriesPoint>& series);

// Perfherder (treeherder perfalert detect_changes): back window 12 values growing to 24, forward 12 values,
// linearly weighted means, t > 7 and a local maximum of t; then the alert threshold |change| >= 2% on the
// windows' plain means. Windows count runs (values), not commits, as Perfherder does.
std::vector<std::size_t> perfherder_rule(const std::vector<bisect::SeriesPoint>& series);

// Textbook change in mean as TCPDBench runs R's changepoint package by default (cpt.mean, Normal cost with
// unit variance on the z-scored series, MBIC penalty 3 log n plus log of each segment length):
// binary segmentation with at most Q = 5 change points, and PELT (optimal partitioning, pruned). Per-commit
// medians; points without finite samples are skipped (indices stay the input's). Indices as ChangePoint::index.
std::vector<std::size_t> binseg_rule(const std::vector<bisect::SeriesPoint>& series);
std::vector<std::size_t> pelt_rule(const std::vector<bisect::SeriesPoint>& series);

} // namespace bisectd::bench
