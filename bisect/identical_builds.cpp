#include "bisect/identical_builds.hpp"

namespace bisectd::bisect {

std::vector<IdenticalBuild> identical_builds(const std::vector<std::optional<std::string>>& fingerprints) {
  std::vector<IdenticalBuild> links;
  std::optional<std::size_t> last; // the nearest earlier commit with a known fingerprint
  std::size_t last_root = 0;       // whose samples `last` uses
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

void link_identical_builds(std::vector<Candidate>& chain, const std::vector<IdenticalBuild>& links) {
  for (const auto& link : links) {
    for (std::size_t k = link.previous + 1; k <= link.commit && k < chain.size(); ++k) {
      chain[k].same_as = link.root;
    }
  }
}

} // namespace bisectd::bisect
