#pragma once
// What the daemon's parts may know about the lab's machines: names, groups, descriptions and what each is doing.
// The machines themselves belong to the dispatcher (daemon/run/machine_slots.hpp).

#include "lab/check_line.hpp"

#include <string>
#include <vector>

namespace bisectd::daemon {

struct MachineInfo {
  std::string name, group, backend, description;
  bool busy = false;
  std::string current;      // commit being built or run; empty when idle
  bool quarantined = false; // no visits until released (daemon/run/quarantine.hpp)
  std::string quarantine_reason;
  int slots = 1; // visits it takes at once (a LAVA device type: its idle devices)
};

class LabView {
public:
  virtual ~LabView() = default;
  // Every machine, in lab-file order.
  [[nodiscard]] virtual std::vector<MachineInfo> machines() const = 0;

  // How many visits `group` takes at once (its machines' slots).
  [[nodiscard]] int machines_in(const std::string& group) const;
  // The first machine of `group` not in quarantine (where interleaved confirmations are pinned), empty when none.
  [[nodiscard]] std::string first_in(const std::string& group) const;
  // What the reports say the group's machines are: the first machine's description, else its name, else the group.
  [[nodiscard]] std::string describe_group(const std::string& group) const;
};

} // namespace bisectd::daemon
