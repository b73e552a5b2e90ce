// Why a bisection has no report, and what became of a report's mail: `bisectctl report` says so instead of
// "no report (yet)".
#include "base/clock.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"

#include <nlohmann/json.hpp>

namespace bisectd::daemon::api {

using nlohmann::json;

std::string no_report_reason(ApiContext& c, const storage::BisectionRow& b) {
  auto id = "bisection " + std::to_string(b.id);
  switch (b.state) {
  case storage::BisectionState::running: return id + " is still running: its report is written when it ends";
  case storage::BisectionState::cancelled: return id + " was cancelled: no report";
  case storage::BisectionState::failed: return id + " failed: " + (b.error.empty() ? "-" : b.error) + "; no report";
  case storage::BisectionState::found:
  case storage::BisectionState::not_found: break;
  }
  auto result = json::parse(b.result_json, nullptr, false);
  if (result.is_object() && result.value("verdict", "") == "no_change") {
    return id + " found no change beyond the threshold: no report is written for no change (`bisectctl show " +
           std::to_string(b.id) + "` gives the numbers)";
  }
  if (auto tree = c.trees.tree(b.tree); tree && !*tree) {
    return id + ": tree " + b.tree + " was removed before the bisection ended: no report";
  }
  return id + " has no report";
}

json report_mail_json(ApiContext& c, const storage::ReportRow& r, const json& repeat_of) {
  auto state = [](const char* name, const std::string& why) { return json{{"state", name}, {"why", why}}; };
  if (r.repeat_of != 0) {
    auto first = repeat_of.is_number() ? "bisection " + repeat_of.dump() : std::string("an earlier one");
    return state("not_mailed", "it repeats the report of " + first +
                                 " (the same culprit for the same tree and job): one mail per culprit");
  }
  if (r.to.empty() && r.cc.empty()) {
    return state("not_mailed", "no recipients: the tree is private and its notify list is empty (`bisectctl tree set "
                               "TREE --notify ADDRESS`)");
  }
  auto outbox = c.outbox.report_mail(r.id);
  if (!outbox || !*outbox) {
    return state("not_mailed", "it has no place in the outbox");
  }
  const auto& o = **outbox;
  switch (o.state) {
  case storage::OutboxState::sent: return state("sent", "mailed");
  case storage::OutboxState::sending: return state("sending", "being handed to the mail transport");
  case storage::OutboxState::failed: return state("failed", "delivery failed for good: " + o.last_error);
  case storage::OutboxState::pending:
    if (o.attempts == 0) {
      return state("pending", "waiting to be mailed");
    }
    return state("pending", "not delivered yet after " + std::to_string(o.attempts) + " attempts (last: " +
                              o.last_error + "); next at " + base::iso8601_utc(o.next_attempt_at));
  }
  return state("pending", "waiting to be mailed");
}

} // namespace bisectd::daemon::api
