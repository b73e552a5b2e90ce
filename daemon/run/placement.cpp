#include "daemon/run/placement.hpp"

#include "base/strings.hpp"
#include "base/units.hpp"

#include <algorithm>
#include <set>

namespace bisectd::daemon::run {

namespace {

std::string group_names(const std::vector<MachineInfo>& machines) {
  std::set<std::string> groups;
  for (const auto& m : machines) {
    groups.insert(m.group);
  }
  return groups.empty() ? std::string("none")
                        : base::join(std::vector<std::string>(groups.begin(), groups.end()), ", ");
}

std::string quarantined_text(const MachineInfo& m) {
  return m.name + (m.quarantine_reason.empty() ? "" : " (" + m.quarantine_reason + ")");
}

} // namespace

std::optional<std::string> unplaceable_reason(const storage::RequestRow& request,
                                              const std::vector<MachineInfo>& machines) {
  if (!request.pin_machine.empty()) {
    auto pinned = std::find_if(machines.begin(), machines.end(),
                               [&](const MachineInfo& m) { return m.name == request.pin_machine; });
    if (pinned == machines.end()) {
      return "pinned to machine '" + request.pin_machine + "', which the lab does not have";
    }
    if (pinned->quarantined) {
      return "pinned to machine " + quarantined_text(*pinned) + ", which is in quarantine";
    }
    return std::nullopt;
  }
  std::vector<const MachineInfo*> group;
  for (const auto& m : machines) {
    if (m.group == request.machine_group) {
      group.push_back(&m);
    }
  }
  if (group.empty()) {
    return "no machine is in group '" + request.machine_group + "' (groups: " + group_names(machines) + ")";
  }
  if (std::all_of(group.begin(), group.end(), [](const MachineInfo* m) { return m->quarantined; })) {
    std::vector<std::string> names;
    for (const auto* m : group) {
      names.push_back(quarantined_text(*m));
    }
    return "every machine of group '" + request.machine_group + "' is in quarantine: " + base::join(names, "; ");
  }
  return std::nullopt;
}

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
