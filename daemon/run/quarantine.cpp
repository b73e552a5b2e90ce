#include "daemon/run/quarantine.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::daemon::run {

Status Quarantine::load() {
  if (m_store == nullptr) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto rows, m_store->machine_states());
  std::lock_guard lock(m_mutex);
  for (auto& row : rows) {
    if (row.quarantined) {
      spdlog::warn("machine {} is quarantined ({}); `bisectctl machine release {}` returns it", row.name, row.reason,
                   row.name);
    }
    m_states[row.name] = std::move(row);
  }
  return {};
}

void Quarantine::store(const storage::MachineStateRow& row) {
  if (m_store == nullptr) {
    return;
  }
  if (auto stored = m_store->put_machine_state(row); !stored) {
    spdlog::error("machine {}: its state could not be stored: {}", row.name, stored.error().message);
  }
}

bool Quarantine::on_visit(const std::string& machine, lab::VisitOutcome outcome, const std::string& message,
                          int threshold) {
  if (outcome == lab::VisitOutcome::cancelled) {
    return false;
  }
  std::lock_guard lock(m_mutex);
  auto& row = m_states[machine];
  row.name = machine;
  if (outcome == lab::VisitOutcome::infra) {
    return count_failure(row, "infra failures in a row, the last: " + message, threshold);
  }
  m_timed_out_commit.erase(machine);
  if (row.consecutive_infra == 0) {
    return false;
  }
  row.consecutive_infra = 0;
  row.updated_at = 0;
  store(row);
  return false;
}

bool Quarantine::on_timeouts(const std::string& machine, const std::string& commit, const std::string& message,
                             int threshold) {
  std::lock_guard lock(m_mutex);
  auto& row = m_states[machine];
  row.name = machine;
  auto& last = m_timed_out_commit[machine];
  if (last == commit) {
    return false; // the same commit again: its code may be what hangs
  }
  last = commit;
  return count_failure(row, "failures in a row, the last: every run timed out: " + message, threshold);
}

// One more failure of the box (`reason` follows the count). True when it put the machine into quarantine.
bool Quarantine::count_failure(storage::MachineStateRow& row, const std::string& reason, int threshold) {
  bool was = row.quarantined;
  ++row.consecutive_infra;
  if (threshold > 0 && row.consecutive_infra >= threshold && !row.quarantined) {
    row.quarantined = true;
    row.reason = std::to_string(row.consecutive_infra) + " " + reason;
    spdlog::error("machine {} quarantined: {}; `bisectctl machine release {}` returns it", row.name, row.reason,
                  row.name);
  }
  row.updated_at = 0;
  store(row);
  return row.quarantined && !was;
}

bool Quarantine::quarantined(const std::string& machine) const {
  std::lock_guard lock(m_mutex);
  auto found = m_states.find(machine);
  return found != m_states.end() && found->second.quarantined;
}

std::string Quarantine::reason(const std::string& machine) const {
  std::lock_guard lock(m_mutex);
  auto found = m_states.find(machine);
  return found != m_states.end() && found->second.quarantined ? found->second.reason : "";
}

Result<bool> Quarantine::release(const std::string& machine) {
  std::lock_guard lock(m_mutex);
  auto found = m_states.find(machine);
  if (found == m_states.end() || !found->second.quarantined) {
    return false;
  }
  found->second.quarantined = false;
  found->second.consecutive_infra = 0;
  found->second.reason.clear();
  found->second.updated_at = 0;
  if (m_store != nullptr) {
    BISECTD_TRY(m_store->put_machine_state(found->second));
  }
  spdlog::info("machine {} released from quarantine", machine);
  return true;
}

} // namespace bisectd::daemon::run
