#pragma once
// Commits whose builds are identical share samples: two builds with the same fingerprint (the binary with the
// version stamp masked) run the same code, so the engine treats them as one build (Candidate::same_as) and the
// change cannot lie between them. Pure: fingerprints in, links out.

#include "bisect/engine.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::bisect {

// Chain commits `previous` < `commit` have identical fingerprints and no commit between them has a known one.
struct IdenticalBuild {
  std::size_t commit;   // the later commit with a fingerprinted build
  std::size_t previous; // the nearest earlier commit with a known fingerprint
  std::size_t root;     // whose samples they all use: `previous`, or the commit `previous` itself shares with
};

// Pure: compares each known fingerprint (nullopt or "" = no build or unknown) with the nearest earlier known one,
// in chain order. Only neighbours among the fingerprinted commits are compared, so a build equal to a non-adjacent
// earlier one (A B A) is not linked.
std::vector<IdenticalBuild> identical_builds(const std::vector<std::optional<std::string>>& fingerprints);

// Sets same_as = root for every chain index in (previous, commit] of each link: under a single change point, the
// commits between two identical builds cannot hold the change either, so they share the root's samples too (and are
// never built). Links must come from identical_builds over this chain.
void link_identical_builds(std::vector<Candidate>& chain, const std::vector<IdenticalBuild>& links);

} // namespace bisectd::bisect
