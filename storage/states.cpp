#include "storage/states.hpp"

#include <array>
#include <utility>

namespace bisectd::storage {

namespace {

template <class Enum, std::size_t N> using Names = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Names<RequestState, 5> k_request_states{{{RequestState::queued, "queued"},
                                                   {RequestState::building, "building"},
                                                   {RequestState::running, "running"},
                                                   {RequestState::done, "done"},
                                                   {RequestState::failed, "failed"}}};
constexpr Names<Purpose, 4> k_purposes{
  {{Purpose::watch, "watch"}, {Purpose::confirm, "confirm"}, {Purpose::bisect, "bisect"}, {Purpose::verify, "verify"}}};
constexpr Names<BisectionState, 5> k_bisection_states{{{BisectionState::running, "running"},
                                                       {BisectionState::found, "found"},
                                                       {BisectionState::not_found, "not_found"},
                                                       {BisectionState::failed, "failed"},
                                                       {BisectionState::cancelled, "cancelled"}}};
constexpr Names<DetectionState, 8> k_detection_states{{{DetectionState::confirming, "confirming"},
                                                       {DetectionState::confirmed, "confirmed"},
                                                       {DetectionState::rejected, "rejected"},
                                                       {DetectionState::baseline, "baseline"},
                                                       {DetectionState::below_threshold, "below_threshold"},
                                                       {DetectionState::measuring_base, "measuring_base"},
                                                       {DetectionState::dropped_by_rewrite, "dropped_by_rewrite"},
                                                       {DetectionState::failed, "failed"}}};
constexpr Names<Origin, 2> k_origins{{{Origin::manual, "manual"}, {Origin::detect, "detect"}}};
constexpr Names<OutboxState, 4> k_outbox_states{{{OutboxState::pending, "pending"},
                                                 {OutboxState::sending, "sending"},
                                                 {OutboxState::sent, "sent"},
                                                 {OutboxState::failed, "failed"}}};
constexpr Names<CommitFlag, 4> k_commit_flags{{{CommitFlag::unbuildable, "unbuildable"},
                                               {CommitFlag::unbootable, "unbootable"},
                                               {CommitFlag::unrunnable, "unrunnable"},
                                               {CommitFlag::infra, "infra"}}};

template <class Enum, std::size_t N> constexpr std::string_view name_of(const Names<Enum, N>& names, Enum value) {
  for (const auto& [e, name] : names) {
    if (e == value) {
      return name;
    }
  }
  return "?";
}

template <class Enum, std::size_t N>
constexpr std::optional<Enum> value_of(const Names<Enum, N>& names, std::string_view name) {
  for (const auto& [e, n] : names) {
    if (n == name) {
      return e;
    }
  }
  return std::nullopt;
}

} // namespace

std::string_view to_string(RequestState state) { return name_of(k_request_states, state); }
std::string_view to_string(Purpose purpose) { return name_of(k_purposes, purpose); }
std::string_view to_string(BisectionState state) { return name_of(k_bisection_states, state); }
std::string_view to_string(DetectionState state) { return name_of(k_detection_states, state); }
std::string_view to_string(Origin origin) { return name_of(k_origins, origin); }
std::string_view to_string(OutboxState state) { return name_of(k_outbox_states, state); }
std::string_view to_string(CommitFlag flag) { return name_of(k_commit_flags, flag); }

std::optional<RequestState> parse_request_state(std::string_view name) { return value_of(k_request_states, name); }
std::optional<Purpose> parse_purpose(std::string_view name) { return value_of(k_purposes, name); }
std::optional<BisectionState> parse_bisection_state(std::string_view name) {
  return value_of(k_bisection_states, name);
}
std::optional<DetectionState> parse_detection_state(std::string_view name) {
  return value_of(k_detection_states, name);
}
std::optional<Origin> parse_origin(std::string_view name) { return value_of(k_origins, name); }
std::optional<OutboxState> parse_outbox_state(std::string_view name) { return value_of(k_outbox_states, name); }
std::optional<CommitFlag> parse_commit_flag(std::string_view name) { return value_of(k_commit_flags, name); }

std::int64_t CommitFlags::count(CommitFlag flag) const {
  switch (flag) {
  case CommitFlag::unbuildable: return unbuildable;
  case CommitFlag::unbootable: return unbootable;
  case CommitFlag::unrunnable: return unrunnable;
  case CommitFlag::infra: return infra;
  }
  return 0;
}

std::string CommitFlags::skip_reason() const {
  if (!is_skipped()) {
    return "";
  }
  std::string out;
  for (auto flag : {CommitFlag::unbuildable, CommitFlag::unbootable, CommitFlag::unrunnable, CommitFlag::infra}) {
    auto n = count(flag);
    if (!is_verdict(flag)) {
      continue;
    }
    auto message = messages.find(flag);
    out += (out.empty() ? "" : "; ") + std::string(to_string(flag)) +
           (n > 1 ? " (" + std::to_string(n) + " times)" : "") +
           (message != messages.end() && !message->second.empty() ? ": " + message->second : "");
  }
  return out;
}

} // namespace bisectd::storage
