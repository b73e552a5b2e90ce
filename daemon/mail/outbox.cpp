#include "daemon/mail/outbox.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bisectd::daemon::mail {

namespace {

constexpr std::int64_t k_retry_base_s = 10;
constexpr std::int64_t k_retry_max_s = 3600;

std::vector<std::string> bare_recipients(const storage::ReportRow& report) {
  std::vector<std::string> recipients;
  for (const auto* list : {&report.to, &report.cc}) {
    for (const auto& r : *list) {
      recipients.push_back(bare_address(r));
    }
  }
  return recipients;
}

} // namespace

std::int64_t retry_delay(std::int64_t attempts) {
  return std::min(k_retry_max_s, k_retry_base_s << std::min<std::int64_t>(attempts, 9));
}

int Outbox::deliver_due(std::int64_t now) {
  auto due = m_store.due_mail(now);
  if (!due) {
    spdlog::error("outbox: {}", due.error().message);
    return 0;
  }
  int sent_count = 0;
  for (const auto& [outbox, report] : *due) {
    auto recipients = bare_recipients(report);
    auto sent = deliver(m_transport, bare_address(report.sender), recipients, report.text);
    if (sent) {
      spdlog::info("mail {} sent to {} recipient(s): {}", report.message_id, recipients.size(), report.subject);
      (void)m_store.mark_mail_sent(outbox.id);
      ++sent_count;
      continue;
    }
    // Refused for good (5xx, bad address, bad credentials): retrying cannot help.
    bool permanent = sent.error().code == ErrorCode::invalid_input || sent.error().code == ErrorCode::invalid_config;
    auto delay = retry_delay(outbox.attempts);
    spdlog::warn("mail {}: {} (attempt {}{})", report.message_id, sent.error().message, outbox.attempts + 1,
                 permanent ? ", not retried" : ", retry in " + std::to_string(delay) + "s");
    (void)m_store.mark_mail_failed(outbox.id, sent.error().message, now + delay, permanent);
  }
  return sent_count;
}

} // namespace bisectd::daemon::mail
