#include "daemon/bisection/build_equivalence.hpp"

#include "base/strings.hpp"
#include "daemon/run/builds.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::daemon::bisection {

namespace {

// A bisection advances twice a second; a commit without a stored build need not cost a file lookup every tick.
constexpr std::chrono::seconds k_miss_retry{5};

} // namespace

std::optional<std::string> BuildEquivalence::fingerprint(const std::string& commit, const std::string& hash,
                                                         std::chrono::steady_clock::time_point now) {
  auto key = hash + "/" + commit;
  auto found = m_stored.find(key);
  if (found == m_stored.end()) {
    auto retry = m_retry.find(key);
    if (retry != m_retry.end() && now < retry->second) {
      return std::nullopt;
    }
    auto build = m_builds.lookup(commit, hash);
    if (!build) {
      m_retry[key] = now + k_miss_retry;
      return std::nullopt;
    }
    m_retry.erase(key);
    // A stored result never changes, so its fingerprint (or its lack of one) is final.
    found = m_stored.emplace(key, build->outcome == kbuild::BuildOutcome::ok ? build->fingerprint : "").first;
  }
  if (found->second.empty()) {
    return std::nullopt;
  }
  return found->second;
}

void BuildEquivalence::apply(const storage::BisectionRow& b, const Job& job, std::vector<bisect::Candidate>& chain) {
  auto hash = run::recipe_for(job, "").hash();
  if (!hash) {
    return;
  }
  auto now = std::chrono::steady_clock::now();
  std::vector<std::optional<std::string>> fingerprints;
  fingerprints.reserve(chain.size());
  for (const auto& candidate : chain) {
    fingerprints.push_back(fingerprint(candidate.id, *hash, now));
  }
  auto links = bisect::identical_builds(fingerprints);
  bisect::link_identical_builds(chain, links);
  for (const auto& link : links) {
    const auto& commit = chain[link.commit].id;
    if (!m_told.insert({b.id, commit}).second) {
      continue;
    }
    auto message = base::short_sha(commit) + " builds identical to " + base::short_sha(chain[link.previous].id) +
                   ": shares its samples";
    if (auto between = link.commit - link.previous - 1; between > 0) {
      message += " (as do the " + std::to_string(between) + (between == 1 ? " commit" : " commits") + " between them)";
    }
    spdlog::info("bisection {}: {}", b.id, message);
    (void)m_events.add_event(b.id, message);
  }
}

} // namespace bisectd::daemon::bisection
