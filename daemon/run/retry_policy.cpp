#include "daemon/run/retry_policy.hpp"

#include <algorithm>

namespace bisectd::daemon::run {

std::chrono::seconds retry_backoff(std::int64_t attempts) {
  constexpr std::int64_t k_base_s = 30;
  constexpr std::int64_t k_max_s = 30 * 60;
  return std::chrono::seconds(std::min(k_max_s, k_base_s << std::clamp<std::int64_t>(attempts - 1, 0, 10)));
}

std::optional<std::chrono::milliseconds> store_retry_wait(int tries, std::chrono::milliseconds waited) {
  if (waited >= k_store_retry_budget) {
    return std::nullopt;
  }
  constexpr std::int64_t k_first_ms = 500, k_max_ms = 30'000;
  return std::chrono::milliseconds(std::min(k_max_ms, k_first_ms << std::clamp(tries - 1, 0, 10)));
}

RetryDecision after_failure(const storage::RequestRow& request, FailureKind kind, bool stopping) {
  if (stopping) {
    return {std::chrono::seconds(0), false}; // cut short by shutdown: redone after the restart
  }
  if (kind == FailureKind::final) {
    return {std::nullopt, false};
  }
  if (request.attempts >= k_max_attempts) {
    return {std::nullopt, true};
  }
  return {kind == FailureKind::unconfirmed ? k_confirm_delay : retry_backoff(request.attempts), false};
}

} // namespace bisectd::daemon::run
