// Machine health: consecutive infra failures and quarantine.
#include "base/clock.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"

namespace bisectd::storage {

Result<std::vector<MachineStateRow>> Store::machine_states() {
  return query<MachineStateRow>(
    *m_connection, "SELECT name, consecutive_infra, quarantined, reason, updated_at FROM machine_state ORDER BY name",
    {}, [](const Statement& s) {
      return MachineStateRow{s.column_text(0), static_cast<int>(s.column_int(1)), s.column_int(2) != 0,
                             s.column_text(3), s.column_int(4)};
    });
}

Status Store::put_machine_state(const MachineStateRow& state) {
  BISECTD_TRY(m_connection->run(
    "INSERT INTO machine_state (name, consecutive_infra, quarantined, reason, updated_at) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT(name) DO UPDATE SET consecutive_infra = excluded.consecutive_infra, "
    "quarantined = excluded.quarantined, reason = excluded.reason, updated_at = excluded.updated_at",
    {text(state.name), integer(state.consecutive_infra), integer(state.quarantined ? 1 : 0), text(state.reason),
     integer(state.updated_at != 0 ? state.updated_at : base::unix_now())}));
  return {};
}

} // namespace bisectd::storage
