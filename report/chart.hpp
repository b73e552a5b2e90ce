#pragma once
// An ASCII scatter chart in the style of gnuplot's "dumb" terminal, drawn by our own code: every sample of
// every tested commit in commit order, good samples '+', bad samples 'O', the culprit's column marked '^'.

#include "report/report.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace bisectd::report {

// Chart of `points` titled `metric`, `width` characters wide (labels included, at least 30) with at most
// `height` data rows (at least 4; fewer when that spaces the ticks evenly). The culprit is the first position
// with a bad-side sample. Empty when there is no finite sample.
std::string ascii_chart(const std::vector<ChartPoint>& points, std::string_view metric, int width, int height);

} // namespace bisectd::report
