#pragma once
// The mail outbox: each report's delivery state.

#include "base/error.hpp"
#include "storage/rows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::storage {

class OutboxStore {
public:
  virtual ~OutboxStore() = default;
  // Pending mail due at `now`, oldest first.
  virtual Result<std::vector<std::pair<OutboxRow, ReportRow>>> due_mail(std::int64_t now) = 0;
  // Records that delivery of a pending mail starts. False when it is no longer pending (another process took
  // it). A mail is handed to a transport only after this is stored: a crash can lose it but never send it twice.
  virtual Result<bool> mark_mail_sending(std::int64_t outbox_id) = 0;
  // Mail left "sending" by a crash; the caller decides (a delivery that may have happened is not repeated).
  virtual Result<std::vector<std::pair<OutboxRow, ReportRow>>> interrupted_mail() = 0;
  virtual Status mark_mail_sent(std::int64_t outbox_id) = 0;
  // The delivery row of the report `report_id`; none for a report that is never mailed (a repeat).
  virtual Result<std::optional<OutboxRow>> report_mail(std::int64_t report_id) = 0;
  virtual Status mark_mail_failed(std::int64_t outbox_id, const std::string& error, std::int64_t next_attempt_at,
                                  bool give_up) = 0;
};

} // namespace bisectd::storage
