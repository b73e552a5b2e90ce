// GET the open requests (queued, building, running): what the lab will do next, and for whom.
#include "daemon/api/page.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

json open_request_json(const storage::RequestRow& r) {
  return {{"id", r.id},
          {"tree", r.tree},
          {"job", r.job},
          {"commit", r.commit},
          {"variant", r.variant},
          {"purpose", to_string(r.purpose)},
          {"bisection_id", r.bisection_id == 0 ? json(nullptr) : json(r.bisection_id)},
          {"detection_id", r.detection_id == 0 ? json(nullptr) : json(r.detection_id)},
          {"machine_group", r.machine_group},
          {"machine", null_if_empty(r.machine)},
          {"state", to_string(r.state)},
          {"runs", r.runs},
          {"attempts", r.attempts},
          {"retry_at", iso_or_null(r.retry_at)},
          {"error", null_if_empty(r.error)}, // the last attempt's, for a request queued again
          {"created_at", iso_or_null(r.created_at)},
          {"updated_at", iso_or_null(r.updated_at)}};
}

} // namespace

HttpResponse get_queue(ApiContext& c, const Call& call) {
  auto page = parse_page(call.query, {});
  auto after = page ? page_after_id(*page) : Result<std::int64_t>(0);
  if (!page || !after) {
    return error_response(page ? after.error() : page.error());
  }
  auto rows = c.queue.open_requests();
  if (!rows) {
    return error_response(rows.error());
  }
  json next;
  auto out = page_of(
    *rows, *page, [&](const auto& r) { return r.id > *after; }, // oldest first
    [](const auto& r) { return std::to_string(r.id); }, open_request_json, next);
  return json_response(200, {{"requests", out}, {"next", next}});
}

} // namespace bisectd::daemon::api
