#include "daemon/build_equivalence.hpp"

#include "base/strings.hpp"
#include "daemon/visit_runner.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::daemon {

namespace {

// A bisection advances twice a second; a commit without a stored build need not cost a file lookup every tick.
constexpr std::chrono::seconds k_miss_retry{5};

} // namespace

std::vector<IdenticalBuild> identical_builds(const std::vector<std::optional<std::string>>& fingerprints) {
  std::vector<IdenticalBuild> links;
  std::optional<std::size_t> last;  // the nearest earlier commit with a known fingerprint
  std::size_t last_root = 0;        // whose samples `last` uses
  for (std::size_t i = 0; i < fingerprints.size(); ++i) {
    const auto& fingerprint = fingerprints[i];
    if (!fingerprint || fingerprint->empty()) {
      continue;
    }
    if (last && *fingerprints[*last] == *fingerprint) {
      links.push_back({i, *last, last_root});
    } else {
      last_root = i;
    }
    last = i;
  }
  return links;
}

void link_identical_builds(std::vector<bisect::Candidate>& chain, const std::vector<IdenticalBuild>& links) {
  for (const auto& link : links) {
    for (std::size_t k = link.previous + 1; k <= link.commit && k < chain.size(); ++k) {
      chain[k].same_as = link.root;
    }
  }
}

std::optional<std::string> BuildEquivalence::fingerprint(Context& context, const std::string& commit,
                                                         const std::string& hash,
                                                         std::chrono::steady_clock::time_point now) {
  auto key = hash + "/" + commit;
  auto found = m_stored.find(key);
  if (found == m_stored.end()) {
    auto retry = m_retry.find(key);
    if (retry != m_retry.end() && now < retry->second) {
      return std::nullopt;
    }
    auto build = context.build_store->lookup(commit, hash);
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

void BuildEquivalence::apply(Context& context, const storage::BisectionRow& b, const Job& job,
                             std::vector<bisect::Candidate>& chain) {
  auto hash = recipe_for(job, "").hash();
  if (!hash || !context.build_store) {
    return;
  }
  auto now = std::chrono::steady_clock::now();
  std::vector<std::optional<std::string>> fingerprints;
  fingerprints.reserve(chain.size());
  for (const auto& candidate : chain) {
    fingerprints.push_back(fingerprint(context, candidate.id, *hash, now));
  }
  auto links = identical_builds(fingerprints);
  link_identical_builds(chain, links);
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
    (void)context.store->add_event(b.id, message);
  }
}

} // namespace bisectd::daemon
