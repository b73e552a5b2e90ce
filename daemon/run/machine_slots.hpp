#pragma once
// The lab's machines and what each is doing. The dispatcher marks a slot busy when it hands the machine a request
// and idle when the visit ends; readers on other threads (the API) see a consistent view through LabView.

#include "daemon/core/lab_view.hpp"
#include "daemon/run/quarantine.hpp"
#include "lab/machine.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace bisectd::daemon::run {

class MachineSlots final : public LabView {
public:
  explicit MachineSlots(std::vector<std::unique_ptr<lab::Machine>> machines);

  [[nodiscard]] std::vector<MachineInfo> machines() const override;
  [[nodiscard]] std::size_t size() const { return m_slots.size(); }
  [[nodiscard]] lab::Machine& machine(std::size_t slot) { return *m_slots[slot].machine; }
  // True when the machine runs as many visits as it takes (Machine::slots(): one, or a LAVA type's idle devices).
  [[nodiscard]] bool busy(std::size_t slot) const;
  // One more visit on `slot` with `commit` (busy), or one fewer (not busy).
  void set_busy(std::size_t slot, bool busy, const std::string& commit = "");
  // Where quarantine is decided (null: none); quarantined slots get no visits.
  void set_quarantine(const Quarantine* quarantine) { m_quarantine = quarantine; }
  [[nodiscard]] bool quarantined(std::size_t slot) const;
  // The slot of machine `name`, -1 when there is none.
  [[nodiscard]] int slot_of(const std::string& name) const;

private:
  struct Slot {
    std::unique_ptr<lab::Machine> machine;
    int running = 0;
    std::string current;
  };
  mutable std::mutex m_mutex;
  std::vector<Slot> m_slots;
  const Quarantine* m_quarantine = nullptr;
};

} // namespace bisectd::daemon::run
