#include "daemon/run/machine_slots.hpp"

namespace bisectd::daemon::run {

MachineSlots::MachineSlots(std::vector<std::unique_ptr<lab::Machine>> machines) {
  for (auto& machine : machines) {
    m_slots.push_back(Slot{std::move(machine), false, ""});
  }
}

std::vector<MachineInfo> MachineSlots::machines() const {
  std::lock_guard lock(m_mutex);
  std::vector<MachineInfo> out;
  for (const auto& slot : m_slots) {
    const auto& spec = slot.machine->spec();
    out.push_back({spec.name, spec.group, spec.backend, spec.description, slot.busy, slot.current});
  }
  return out;
}

bool MachineSlots::busy(std::size_t slot) const {
  std::lock_guard lock(m_mutex);
  return m_slots[slot].busy;
}

void MachineSlots::set_busy(std::size_t slot, bool busy, const std::string& commit) {
  std::lock_guard lock(m_mutex);
  m_slots[slot].busy = busy;
  m_slots[slot].current = busy ? commit : "";
}

} // namespace bisectd::daemon::run
