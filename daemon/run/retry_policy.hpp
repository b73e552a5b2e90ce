#pragma once
// What happens to a request whose attempt failed: every retry is bounded and backs off, so a request that keeps
// failing (a poison input, a broken machine) can neither spin nor starve the queue. Pure; unit-tested.

#include "base/error.hpp"
#include "storage/rows.hpp"

#include <chrono>
#include <optional>

namespace bisectd::daemon::run {

// Claims of one request before it fails for good: infra failures, crashes of its visit, daemon stops mid-visit.
inline constexpr int k_max_attempts = 3;
// A daemon stopped (or killed) during a visit redoes it after the restart; this many stops fail it.
inline constexpr int k_max_interrupted_attempts = 5;

// Why an attempt failed, as far as trying again goes.
enum class FailureKind {
  passing,     // lab or infrastructure trouble, a run that timed out (the box may have hung): may pass, retried
               // with back-off; never a verdict on the commit
  unconfirmed, // the commit's own failure (its build, boot or benchmark) seen once: tried again soon, on a new
               // build or boot, because the first may have been the machine's
  final,       // repeats whatever is done (a bad recipe, the commit's failure seen twice): fails for good
};

struct RetryDecision {
  // Queue again, to be claimed this long after now; nullopt: the request fails for good.
  std::optional<std::chrono::seconds> retry_after;
  // The request failed for good on lab trouble: flag the commit `infra` so nobody asks for it again.
  bool flag_commit = false;
};

// An unconfirmed failure is tried again after this long: nothing has to pass first, and another machine of the
// group may take it meanwhile.
inline constexpr std::chrono::seconds k_confirm_delay{5};

// The decision for `request` (its `attempts` include the one that just failed) after a failure of `kind`.
// `stopping`: the daemon is shutting down (the visit is redone at once after the restart).
RetryDecision after_failure(const storage::RequestRow& request, FailureKind kind, bool stopping);

// 30 s after the first failure, doubling, at most 30 min.
std::chrono::seconds retry_backoff(std::int64_t attempts);

// A request's outcome the store could not record (disk full, database locked) is written again, not dropped: a
// request left "building" or "running" in the store would hold up its bisection until the next restart. The wait
// before write number `tries` + 1: 0.5 s, doubling, at most 30 s; nullopt once k_store_retry_budget has passed.
inline constexpr std::chrono::seconds k_store_retry_budget{600};
std::optional<std::chrono::milliseconds> store_retry_wait(int tries, std::chrono::milliseconds waited);

} // namespace bisectd::daemon::run
