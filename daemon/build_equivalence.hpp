#pragma once
// Commits whose builds are identical share samples (issue 3, part 7): two builds with the same fingerprint
// (kbuild/fingerprint.hpp: the binary with the version stamp masked) run the same code, so the engine treats them
// as one build (bisect::Candidate::same_as) and the change cannot lie between them (bisect gives a commit whose
// build equals its parent's no prior mass).

#include "bisect/engine.hpp"
#include "daemon/context.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::daemon {

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
void link_identical_builds(std::vector<bisect::Candidate>& chain, const std::vector<IdenticalBuild>& links);

// The daemon side: reads the fingerprints of the chain's stored builds (the job's recipe) and links identical ones.
class BuildEquivalence {
public:
  // Links the chain's identical builds (link_identical_builds) and writes one bisection event per newly seen
  // (bisection, commit). A commit without a stored build is looked up again at most every few seconds.
  void apply(Context& context, const storage::BisectionRow& b, const Job& job, std::vector<bisect::Candidate>& chain);

private:
  // The fingerprint of the stored build of (commit, recipe hash); nullopt while none is stored or it is unknown.
  std::optional<std::string> fingerprint(Context& context, const std::string& commit, const std::string& hash,
                                         std::chrono::steady_clock::time_point now);

  std::map<std::string, std::string> m_stored; // "<hash>/<commit>" -> fingerprint of a stored build ("" = unknown)
  std::map<std::string, std::chrono::steady_clock::time_point> m_retry; // no stored build: not before then
  std::set<std::pair<std::int64_t, std::string>> m_told;                // (bisection, commit) whose event was written
};

} // namespace bisectd::daemon
