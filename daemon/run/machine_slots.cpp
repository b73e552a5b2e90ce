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
    out.push_back({spec.name, spec.group, spec.backend, slot.machine->describe(), slot.running >= slot.machine->slots(),
                   slot.current, m_quarantine != nullptr && m_quarantine->quarantined(spec.name),
                   m_quarantine != nullptr ? m_quarantine->reason(spec.name) : "", slot.machine->slots()});
  }
  return out;
}

int MachineSlots::slot_of(const std::string& name) const {
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    if (m_slots[i].machine->spec().name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool MachineSlots::quarantined(std::size_t slot) const {
  return m_quarantine != nullptr && m_quarantine->quarantined(m_slots[slot].machine->spec().name);
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
