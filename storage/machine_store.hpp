#pragma once
// Lab machines' health as the daemon saw it: consecutive infra failures and quarantine (a machine that keeps failing
// gets no visits until an operator releases it), kept across restarts.

#include "base/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bisectd::storage {

struct MachineStateRow {
  std::string name;
  int consecutive_infra = 0; // infra visits in a row (an ok or boot_failed visit resets it)
  bool quarantined = false;
  std::string reason;          // the last infra failure's message, when quarantined
  std::int64_t updated_at = 0; // unix time
};

class MachineStore {
public:
  virtual ~MachineStore() = default;
  virtual Result<std::vector<MachineStateRow>> machine_states() = 0;
  // Inserts or replaces the row of `state.name`.
  virtual Status put_machine_state(const MachineStateRow& state) = 0;
};

} // namespace bisectd::storage
