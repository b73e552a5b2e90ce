#pragma once
// Commits whose builds are identical share samples (bisect/identical_builds.hpp): this reads the fingerprints of a
// chain's stored builds (kbuild/fingerprint.hpp: the binary with the version stamp masked) and links them, telling
// each link once as a bisection event.

#include "bisect/identical_builds.hpp"
#include "daemon/core/job.hpp"
#include "kbuild/build_store.hpp"
#include "storage/bisection_store.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::daemon::bisection {

// The daemon side: reads the fingerprints of the chain's stored builds (the job's recipe) and links identical ones.
class BuildEquivalence {
public:
  BuildEquivalence(const kbuild::BuildStore& builds, storage::BisectionStore& events)
      : m_builds(builds), m_events(events) {}

  // Links the chain's identical builds (link_identical_builds) and writes one bisection event per newly seen
  // (bisection, commit). A commit without a stored build is looked up again at most every few seconds.
  void apply(const storage::BisectionRow& b, const Job& job, std::vector<bisect::Candidate>& chain);

private:
  // The fingerprint of the stored build of (commit, recipe hash); nullopt while none is stored or it is unknown.
  std::optional<std::string> fingerprint(const std::string& commit, const std::string& hash,
                                         std::chrono::steady_clock::time_point now);

  const kbuild::BuildStore& m_builds;
  storage::BisectionStore& m_events;
  std::map<std::string, std::string> m_stored; // "<hash>/<commit>" -> fingerprint of a stored build ("" = unknown)
  std::map<std::string, std::chrono::steady_clock::time_point> m_retry; // no stored build: not before then
  std::set<std::pair<std::int64_t, std::string>> m_told;                // (bisection, commit) whose event was written
};

} // namespace bisectd::daemon::bisection
