#pragma once
// Delivery of the outbox, exactly once: a mail is marked "sending" before it is handed to the transport (nothing
// is delivered while the store cannot record that), marked sent after the transport accepted it, and a mail a
// crash left "sending" is never delivered again. Temporary failures are retried with exponential backoff; an
// address the transport cannot take is dropped (and logged) instead of failing the mail for everyone.

#include "base/clock.hpp"
#include "daemon/mail/transport.hpp"
#include "storage/outbox_store.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::daemon::mail {

class Outbox {
public:
  // Unix seconds now: what a mail's Date header says when it is handed to the transport.
  using Clock = std::function<std::int64_t()>;

  Outbox(storage::OutboxStore& store, Transport transport, Clock clock = base::unix_now)
      : m_store(store), m_transport(std::move(transport)), m_clock(std::move(clock)) {}

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
  Clock m_clock;
};

// `message` (a whole RFC 5322 text) with its Date header saying `date`: a report is stored when its bisection ends
// and may wait for hours (a retry, a full queue), but it is dated by the attempt that hands it over. The rest of the
// message (Message-ID included, so a retry is the same mail) stays as it is; a message without a Date gets one.
std::string with_date(std::string_view message, std::string_view date);

// Seconds until the next attempt after `attempts` failed ones: 10 s doubling, at most an hour.
std::int64_t retry_delay(std::int64_t attempts);

// The envelope recipients of `report` (To, then Cc), bare, without duplicates; `dropped` gets the ones that are
// no usable envelope address.
std::vector<std::string> envelope_recipients(const storage::ReportRow& report, std::vector<std::string>& dropped);

} // namespace bisectd::daemon::mail
