#pragma once
// The statistics of culprit verification: the confirm pairs' shift with its interval, whether a shift vanished
// under forced code alignment, and how much of a shift reverting the culprit undoes. Pure; unit-tested.

#include "bisect/detect.hpp"

#include <cstddef>
#include <vector>

namespace bisectd::bisect {

// Relative change of the means with a 95% normal-approximation interval (±half width), both relative to
// the mean of `before`. NaN when either side has fewer than 2 values.
struct MeanChange {
  double change = 0;
  double half_width = 0;
  std::size_t n_before = 0, n_after = 0;
};
MeanChange mean_change(const std::vector<double>& before, const std::vector<double>& after);

// The layout check: `normal` is the parent→culprit shift as built normally, `variant` the same pair built
// with forced alignment. The shift vanished when the variant's shift is not confirmed and less than half
// the normal one (or points the other way).
bool shift_vanished(const bisect::ShiftTest& normal, const bisect::ShiftTest& variant);

// How much of the culprit's relative `shift` (culprit vs parent, e.g. -0.6) the reverted head undoes, from
// runs of the reverted head and of the bad head taken interleaved (so lab drift cancels): the log ratio of
// their medians over -log(1 + shift). 1 = all of it, 0 = nothing. NaN when a side is empty or shift is ~0.
double recovered_fraction(const std::vector<double>& bad, const std::vector<double>& revert, double shift);

// recovered_fraction with a 95 % interval: ± 1.96 standard errors of the log-median difference (a median's
// standard error taken as 1.2533 robust sigma / sqrt(n), its value for normal runs; sigma from each side's MAD of
// log values) over |log(1 + shift)|. half_width is NaN when a side has fewer than 2 runs.
struct Recovery {
  double fraction = 0;
  double half_width = 0;
};
Recovery revert_recovery(const std::vector<double>& bad, const std::vector<double>& revert, double shift);

// What a recovery says: comes back (>= 70 %), partly (>= 30 %), does not (< 30 %). too_noisy when its interval
// reaches from below 30 % to 70 % or more, so more runs could still give any of the three; unknown when there is
// no fraction. A recovery without an interval is judged by its fraction alone.
enum class RevertVerdict { comes_back, partly, does_not_come_back, too_noisy, unknown };
RevertVerdict revert_verdict(const Recovery& r);

} // namespace bisectd::bisect
