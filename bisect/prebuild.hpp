#pragma once
// Which builds to make ahead of time while a BCB round waits for its runs in flight. Rounds are synchronous,
// so the machines' build slot idles until the round lands; but whichever way the in-flight runs come out, the
// next round targets the posterior median of the interval the change is then known to lie in. Building those
// commits now lets the next visit reuse the build instead of waiting for it.

#include "bisect/engine.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace bisectd::bisect {

// Chain indices worth building now, best (most likely to be picked next) first, at most `max_count`: for each
// interval between the commits in flight (their posterior CDF values split [0, 1]), the pickable commit nearest
// to the interval's CDF midpoint, ordered by the interval's mass; with nothing in flight, the midpoints
// (2j - 1) / (2(K + 1)) of the K-machine round's intervals. Never a built, in-flight, skipped, irrelevant or
// non-canonical commit. Empty while `max_count` built commits without samples still wait inside the posterior's
// bulk (earlier prebuilds the search may yet pick; more would mostly be builds nobody runs), for the classic
// method, an invalid problem, a spent build budget, or once the posterior names a culprit or "no change" with
// P >= 1 - delta (what follows is verification, on built commits).
std::vector<std::size_t> prebuild_candidates(const Problem& problem, int max_count);

// The number of `shas` (prebuilt commits) that sit on `problem`'s chain but have no samples there (themselves or
// through an identical build they share samples with): builds spent that the engine's builds_used does not count.
int unused_prebuilds(const std::vector<std::string>& shas, const Problem& problem);

} // namespace bisectd::bisect
