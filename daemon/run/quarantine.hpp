#pragma once
// Machines that keep failing: after `quarantine_after` consecutive infra visits (lab::Machine::quarantine_after(),
// 0 = never) a machine is quarantined — the dispatcher gives it no visits, so its group's queued work goes to the
// group's other machines — until an operator releases it (`bisectctl machine release NAME`). An ok or
// boot_failed visit (the box worked; the kernel may not have) resets the count. A visit whose every run timed out
// counts like an infra failure, once per commit in a row: a box that hangs on every commit is quarantined, one
// commit that hangs the benchmark (it would on every box) is not. State is kept in the store.

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
  // Counts a visit of `commit` whose every run timed out. True when it put the machine into quarantine.
  bool on_timeouts(const std::string& machine, const std::string& commit, const std::string& message, int threshold);
  [[nodiscard]] bool quarantined(const std::string& machine) const;
  // Why (the last infra failure), empty when not quarantined.
  [[nodiscard]] std::string reason(const std::string& machine) const;
  // Returns the machine to service. False when it was not quarantined.
  Result<bool> release(const std::string& machine);

private:
  void store(const storage::MachineStateRow& row);
  bool count_failure(storage::MachineStateRow& row, const std::string& reason, int threshold);

  storage::MachineStore* m_store;
  mutable std::mutex m_mutex;
  std::map<std::string, storage::MachineStateRow> m_states;
  // machine -> the commit of its last all-timeout visit while counting (kept in memory: after a restart one
  // hanging commit may count once more)
  std::map<std::string, std::string> m_timed_out_commit;
};

} // namespace bisectd::daemon::run
