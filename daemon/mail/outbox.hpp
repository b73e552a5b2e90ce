#pragma once
// Delivery of the outbox, exactly once: a mail is marked "sending" before it is handed to the transport (nothing
// is delivered while the store cannot record that), marked sent after the transport accepted it, and a mail a
// crash left "sending" is never delivered again. Temporary failures are retried with exponential backoff; an
// address the transport cannot take is dropped (and logged) instead of failing the mail for everyone.

#include "daemon/mail/transport.hpp"
#include "storage/outbox_store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bisectd::daemon::mail {

class Outbox {
public:
  Outbox(storage::OutboxStore& store, Transport transport) : m_store(store), m_transport(std::move(transport)) {}

  // At start-up: mail a previous process left "sending". An mbox shows whether the entry was written (then it is
  // sent); for SMTP and sendmail nobody can tell, so it is failed with that reason rather than risk a duplicate.
  void recover_interrupted();
  // Delivers every mail due at `now` (blocking: run it off the io thread); returns how many were sent.
  int deliver_due(std::int64_t now);

private:
  // Hands one mail to the transport; recipients the transport refuses are dropped one by one.
  Status deliver_one(const storage::ReportRow& report);
  void store_sent(std::int64_t outbox_id, const std::string& message_id);

  storage::OutboxStore& m_store;
  Transport m_transport;
};

// Seconds until the next attempt after `attempts` failed ones: 10 s doubling, at most an hour.
std::int64_t retry_delay(std::int64_t attempts);

// The envelope recipients of `report` (To, then Cc), bare, without duplicates; `dropped` gets the ones that are
// no usable envelope address.
std::vector<std::string> envelope_recipients(const storage::ReportRow& report, std::vector<std::string>& dropped);

} // namespace bisectd::daemon::mail
