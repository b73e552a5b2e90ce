#pragma once
// Delivery of the outbox: every due report goes to the transport; a mail is marked sent only after the transport
// accepted it, temporary failures are retried with exponential backoff, permanent ones are not retried.

#include "daemon/mail/transport.hpp"
#include "storage/outbox_store.hpp"

#include <cstdint>

namespace bisectd::daemon::mail {

class Outbox {
public:
  Outbox(storage::OutboxStore& store, Transport transport) : m_store(store), m_transport(std::move(transport)) {}

  // Delivers every mail due at `now` (blocking: run it off the io thread); returns how many were sent.
  int deliver_due(std::int64_t now);

private:
  storage::OutboxStore& m_store;
  Transport m_transport;
};

// Seconds until the next attempt after `attempts` failed ones: 10 s doubling, at most an hour.
std::int64_t retry_delay(std::int64_t attempts);

} // namespace bisectd::daemon::mail
