#pragma once
// The domain states the store keeps, as types. The database holds their names (text columns, readable with
// sqlite3); conversion happens here and nowhere else. Rules that depend only on a state (is a request still
// open, is a commit skipped) are written once, next to the type.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace bisectd::storage {

// A test request's life: queued → building → running → done | failed (or back to queued for a retry).
enum class RequestState { queued, building, running, done, failed };
// Why a request measures a commit.
enum class Purpose {
  watch,   // a new branch head joins the watched series
  confirm, // interleaved reruns of two heads confirm a detected shift
  bisect,  // a pick of the bisection engine
  verify,  // the culprit's verification (confirm pairs, revert, layout)
};
enum class BisectionState { running, found, not_found, failed, cancelled };
// What the watcher decided about a measured head (one detection row each), or about a shift the change-point
// detector proposed over the series: the first head is the baseline; a head within the threshold of the last
// measured one becomes the next baseline; a bigger shift is confirmed by interleaved reruns (or not), and a
// confirmed shift across a rewritten history waits for the merge base's measurement (measuring_base) and is either
// bisected on the new history or came with the commits the rewrite dropped (dropped_by_rewrite). A head that could
// not be measured is failed, with why.
enum class DetectionState {
  confirming,
  confirmed,
  rejected,
  baseline,
  below_threshold,
  measuring_base,
  dropped_by_rewrite,
  failed
};
// Still being decided: the branch's next head waits (one shift per branch at a time).
constexpr bool is_deciding(DetectionState state) {
  return state == DetectionState::confirming || state == DetectionState::measuring_base;
}
// Who opened a bisection.
enum class Origin { manual, detect };
// A report mail: pending (due at next_attempt_at) → sending (handed to the transport) → sent | failed.
enum class OutboxState { pending, sending, sent, failed };
// What a commit cannot do for a job: counted per (job, job definition, commit, variant).
enum class CommitFlag {
  unbuildable, // the build failed for the commit's own reasons
  unbootable,  // the kernel did not boot
  unrunnable,  // the benchmark gave no sample on it (failed, not timed out)
  infra,       // the lab failed on it every time it tried (attempts exhausted): skipped, with the reason stored
};

// Names as stored (and shown in the API): "queued", "not_found", ...
std::string_view to_string(RequestState state);
std::string_view to_string(Purpose purpose);
std::string_view to_string(BisectionState state);
std::string_view to_string(DetectionState state);
std::string_view to_string(Origin origin);
std::string_view to_string(OutboxState state);
std::string_view to_string(CommitFlag flag);

// The inverse; nullopt for a name that is not one of the type's values.
std::optional<RequestState> parse_request_state(std::string_view name);
std::optional<Purpose> parse_purpose(std::string_view name);
std::optional<BisectionState> parse_bisection_state(std::string_view name);
std::optional<DetectionState> parse_detection_state(std::string_view name);
std::optional<Origin> parse_origin(std::string_view name);
std::optional<OutboxState> parse_outbox_state(std::string_view name);
std::optional<CommitFlag> parse_commit_flag(std::string_view name);

// Queued, building or running: the request may still produce samples.
constexpr bool is_open(RequestState state) {
  return state == RequestState::queued || state == RequestState::building || state == RequestState::running;
}
// Queued or building: its visit has not started measuring yet.
constexpr bool is_waiting(RequestState state) {
  return state == RequestState::queued || state == RequestState::building;
}

// How often each flag was raised for a (job, job definition, commit, variant).
struct CommitFlags {
  // A failure is evidence, not a verdict: a build, boot or benchmark that failed once may have met a flaky machine
  // (an OOM-killed compiler, a box that hung). The same failure on a second attempt (a new build, a new boot) skips
  // the commit. `infra` is raised only once a request's attempts are all spent, so once is enough there.
  static constexpr std::int64_t k_failures_to_skip = 2;

  std::int64_t unbuildable = 0, unbootable = 0, unrunnable = 0, infra = 0;
  // The message stored with each flag's latest raise: the build's error line, the visit's failure.
  std::map<CommitFlag, std::string> messages;

  [[nodiscard]] std::int64_t count(CommitFlag flag) const;
  // How often `flag` must be raised before it is a verdict on the commit.
  static constexpr std::int64_t failures_to_skip(CommitFlag flag) {
    return flag == CommitFlag::infra ? 1 : k_failures_to_skip;
  }
  // The failure behind `flag` is a verdict on the commit (seen often enough).
  [[nodiscard]] bool is_verdict(CommitFlag flag) const { return count(flag) >= failures_to_skip(flag); }
  // The commit cannot be measured: bisections skip it (keeping its prior mass), the watcher waits for the next head.
  [[nodiscard]] bool is_skipped() const {
    return is_verdict(CommitFlag::unbuildable) || is_verdict(CommitFlag::unbootable) ||
           is_verdict(CommitFlag::unrunnable) || is_verdict(CommitFlag::infra);
  }
  // Why is_skipped() holds, for a report: each flag that skips the commit with its message, "; "-joined
  // ("unbuildable: mm/x.c:12: error: ..."; "unbootable (2 times): ..."); "" when the commit is not skipped.
  [[nodiscard]] std::string skip_reason() const;
};

} // namespace bisectd::storage
