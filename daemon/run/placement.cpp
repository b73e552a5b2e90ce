#include "daemon/run/placement.hpp"

#include "base/units.hpp"

#include <algorithm>

namespace bisectd::daemon::run {

std::vector<Unplaceable> PlacementWatch::due(const std::vector<storage::RequestRow>& queued,
                                             const std::vector<MachineInfo>& machines, std::int64_t now) {
  std::map<std::int64_t, std::int64_t> still;
  std::vector<Unplaceable> out;
  for (const auto& r : queued) {
    auto reason = unplaceable_reason(r, machines);
    if (!reason) {
      continue;
    }
    auto [it, first] = m_since.emplace(r.id, now);
    still[r.id] = it->second;
    if (now - it->second >= m_timeout.count()) {
      out.push_back({r, *reason + " for " + base::format_duration(std::chrono::seconds(now - it->second))});
    }
  }
  m_since = std::move(still);
  return out;
}

} // namespace bisectd::daemon::run
