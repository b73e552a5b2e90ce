#include "daemon/run/machine_slots.hpp"

#include <algorithm>

namespace bisectd::daemon::run {

MachineSlots::MachineSlots(std::vector<std::unique_ptr<lab::Machine>> machines) {
  for (auto& machine : machines) {
    m_slots.push_back(Slot{std::move(machine), 0, ""});
  }
}

std::vector<MachineInfo> MachineSlots::machines() const {
  std::lock_guard lock(m_mutex);
  std::vector<MachineInfo> out;
  for (const auto& slot : m_slots) {
    const auto& spec = slot.machine->spec();
    out.push_back({spec.name, spec.group, spec.backend, spec.description, slot.running >= slot.machine->slots(),
                   slot.current, slot.machine->slots()});
  }
  return out;
}

bool MachineSlots::busy(std::size_t slot) const {
  std::lock_guard lock(m_mutex);
  return m_slots[slot].running >= m_slots[slot].machine->slots();
}

void MachineSlots::set_busy(std::size_t slot, bool busy, const std::string& commit) {
  std::lock_guard lock(m_mutex);
  auto& s = m_slots[slot];
  s.running = std::max(0, s.running + (busy ? 1 : -1));
  if (busy || s.running == 0) {
    s.current = busy ? commit : "";
  }
}

} // namespace bisectd::daemon::run
