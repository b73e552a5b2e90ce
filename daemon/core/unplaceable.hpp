#pragma once
// Why no machine can take a queued request: pinned to a machine the lab does not have or one in quarantine, or
// queued for a group with no machine or with every machine in quarantine. The dispatcher fails such a request after
// its placement timeout (daemon/run/placement.hpp); `show` says it while the bisection waits.

#include "daemon/core/lab_view.hpp"
#include "storage/rows.hpp"

#include <optional>
#include <string>
#include <vector>

namespace bisectd::daemon {

// Why no machine can take `request`, or nullopt when one could (busy or idle).
std::optional<std::string> unplaceable_reason(const storage::RequestRow& request,
                                              const std::vector<MachineInfo>& machines);

// What a bisection with `requests` waits for: the first of its queued requests no machine can take, and why.
std::optional<std::string> waiting_for(const std::vector<storage::RequestRow>& requests,
                                       const std::vector<MachineInfo>& machines);

} // namespace bisectd::daemon
