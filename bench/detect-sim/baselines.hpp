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

} // namespace bisectd::bench
