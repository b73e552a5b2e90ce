#pragma once
// Machines that keep failing: after `quarantine_after` consecutive infra visits (lab::Machine::quarantine_after(),
// 0 = never) a machine is quarantined — the dispatcher gives it no visits, so its group's queued work goes to the
// group's other machines — until an operator releases it (`bisectctl machine release NAME`). An ok or
// boot_failed visit (the box worked; the kernel may not have) resets the count. State is kept in the store.

#include "lab/machine.hpp"
#include "storage/machine_store.hpp"

#include <map>
#include <mutex>
#include <string>

namespace bisectd::daemon::run {

class Quarantine {
public:
  // `store` may be null (no persistence: tests, tools).
  explicit Quarantine(storage::MachineStore* store) : m_store(store) {}

  // Reads the stored state. Errors: the store's.
  Status load();
  // Counts a visit's outcome. True when this visit put the machine into quarantine.
  bool on_visit(const std::string& machine, lab::VisitOutcome outcome, const std::string& message, int threshold);
  [[nodiscard]] bool quarantined(const std::string& machine) const;
  // Why (the last infra failure), empty when not quarantined.
  [[nodiscard]] std::string reason(const std::string& machine) const;
  // Returns the machine to service. False when it was not quarantined.
  Result<bool> release(const std::string& machine);

private:
  void store(const storage::MachineStateRow& row);

  storage::MachineStore* m_store;
  mutable std::mutex m_mutex;
  std::map<std::string, storage::MachineStateRow> m_states;
};

} // namespace bisectd::daemon::run
