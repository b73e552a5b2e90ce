#include "daemon/mail/outbox.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace bisectd::daemon::mail {

namespace {

constexpr std::int64_t k_retry_base_s = 10;
constexpr std::int64_t k_retry_max_s = 3600;
constexpr int k_mark_sent_tries = 3; // the store may be locked for a moment; the mail is out already

bool is_permanent(const Error& error) {
  return error.code == ErrorCode::invalid_input || error.code == ErrorCode::invalid_config;
}

// True when the mbox at `path` holds a message with this Message-ID (mboxrd keeps header lines unchanged).
bool mbox_has(const std::filesystem::path& path, const std::string& message_id) {
  auto text = base::read_file(path);
  return text && text->find("Message-ID: " + message_id) != std::string::npos;
}

} // namespace

std::string with_date(std::string_view message, std::string_view date) {
  std::string_view eol = message.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
  std::size_t header_end = message.find(std::string(eol) + std::string(eol));
  header_end = header_end == std::string_view::npos ? message.size() : header_end + eol.size();
  std::string line = "Date: " + std::string(date) + std::string(eol);
  for (std::size_t start = 0; start < header_end;) {
    std::size_t end = message.find(eol, start);
    end = end == std::string_view::npos || end > header_end ? header_end : end + eol.size();
    if (base::to_lower(message.substr(start, 5)) == "date:") {
      while (end < header_end && (message[end] == ' ' || message[end] == '\t')) { // a folded value goes too
        std::size_t next = message.find(eol, end);
        end = next == std::string_view::npos || next > header_end ? header_end : next + eol.size();
      }
      return std::string(message.substr(0, start)) + line + std::string(message.substr(end));
    }
    start = end;
  }
  return line + std::string(message);
}

std::int64_t retry_delay(std::int64_t attempts) {
  return std::min(k_retry_max_s, k_retry_base_s << std::min<std::int64_t>(attempts, 9));
}

std::vector<std::string> envelope_recipients(const storage::ReportRow& report, std::vector<std::string>& dropped) {
  std::vector<std::string> recipients;
  for (const auto* list : {&report.to, &report.cc}) {
    for (const auto& r : *list) {
      auto bare = bare_address(r);
      auto same = [&](const std::string& other) { return base::to_lower(other) == base::to_lower(bare); };
      if (!is_envelope_address(bare)) {
        dropped.push_back(r);
      } else if (std::none_of(recipients.begin(), recipients.end(), same)) {
        recipients.push_back(bare);
      }
    }
  }
  return recipients;
}

Status Outbox::deliver_one(const storage::ReportRow& report) {
  std::vector<std::string> dropped;
  auto recipients = envelope_recipients(report, dropped);
  for (const auto& bad : dropped) {
    spdlog::warn("mail {}: recipient '{}' is not a deliverable address: left out", report.message_id, bad);
  }
  auto sender = bare_address(report.sender);
  auto text = with_date(report.text, base::rfc5322_date(m_clock()));
  auto sent = deliver(m_transport, sender, recipients, text);
  if (sent || !is_permanent(sent.error()) || recipients.size() < 2) {
    return sent;
  }
  // Refused for good as a whole: one address may be to blame. Each recipient on its own then, so that one bad
  // address costs only its own copy (each recipient still gets the mail once).
  int accepted = 0;
  for (const auto& recipient : recipients) {
    if (auto one = deliver(m_transport, sender, {recipient}, text); one) {
      ++accepted;
    } else {
      spdlog::warn("mail {}: recipient {} refused: {}", report.message_id, recipient, one.error().message);
    }
  }
  return accepted > 0 ? Status{} : sent;
}

void Outbox::store_sent(std::int64_t outbox_id, const std::string& message_id) {
  for (int attempt = 1;; ++attempt) {
    auto stored = m_store.mark_mail_sent(outbox_id);
    if (stored) {
      return;
    }
    if (attempt == k_mark_sent_tries) {
      // It stays "sending": never delivered again, and recover_interrupted() settles it at the next start.
      spdlog::error("mail {} was sent but the store could not record it: {}", message_id, stored.error().message);
      return;
    }
    std::this_thread::sleep_for(std::chrono::seconds(attempt));
  }
}

int Outbox::deliver_due(std::int64_t now) {
  auto due = m_store.due_mail(now);
  if (!due) {
    spdlog::error("outbox: {}", due.error().message);
    return 0;
  }
  int sent_count = 0;
  for (const auto& [outbox, report] : *due) {
    auto claimed = m_store.mark_mail_sending(outbox.id);
    if (!claimed) {
      spdlog::warn("mail {}: not sent now, the store cannot record the delivery: {}", report.message_id,
                   claimed.error().message);
      return sent_count; // nothing is delivered that could not be recorded
    }
    if (!*claimed) {
      continue; // no longer pending
    }
    auto sent = deliver_one(report);
    if (sent) {
      spdlog::info("mail {} sent: {}", report.message_id, report.subject);
      store_sent(outbox.id, report.message_id);
      ++sent_count;
      continue;
    }
    bool permanent = is_permanent(sent.error());
    auto delay = retry_delay(outbox.attempts);
    spdlog::warn("mail {}: {} (attempt {}{})", report.message_id, sent.error().message, outbox.attempts + 1,
                 permanent ? ", not retried" : ", retry in " + std::to_string(delay) + "s");
    if (auto stored = m_store.mark_mail_failed(outbox.id, sent.error().message, now + delay, permanent); !stored) {
      spdlog::error("mail {}: the failure could not be recorded ({}); it stays unsent", report.message_id,
                    stored.error().message);
    }
  }
  return sent_count;
}

void Outbox::recover_interrupted() {
  auto interrupted = m_store.interrupted_mail();
  if (!interrupted) {
    spdlog::error("outbox: {}", interrupted.error().message);
    return;
  }
  for (const auto& [outbox, report] : *interrupted) {
    if (m_transport.kind == Transport::Kind::mbox && mbox_has(m_transport.mbox_path, report.message_id)) {
      spdlog::info("mail {}: delivered before the last stop", report.message_id);
      (void)m_store.mark_mail_sent(outbox.id);
      continue;
    }
    auto why = "delivery was interrupted by a daemon stop; not sent again, so that nobody can get it twice (it "
               "may or may not have arrived: Message-ID " +
               report.message_id + ")";
    spdlog::warn("mail {}: {}", report.message_id, why);
    (void)m_store.mark_mail_failed(outbox.id, why, 0, true);
  }
}

} // namespace bisectd::daemon::mail
