#include "daemon/core/unplaceable.hpp"

#include "base/strings.hpp"

#include <algorithm>
#include <set>

namespace bisectd::daemon {

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

std::optional<std::string> waiting_for(const std::vector<storage::RequestRow>& requests,
                                       const std::vector<MachineInfo>& machines) {
  for (const auto& r : requests) {
    if (r.state == storage::RequestState::queued) {
      if (auto why = unplaceable_reason(r, machines)) {
        return why;
      }
    }
  }
  return std::nullopt;
}

} // namespace bisectd::daemon
