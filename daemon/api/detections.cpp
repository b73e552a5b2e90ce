// GET every head the watcher measured (or failed to) and what it decided: baseline, below the threshold,
// confirming, confirmed with its bisection, not confirmed, failed with why and the request, rewritten history.
#include "base/strings.hpp"
#include "daemon/api/page.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"

#include <fmt/format.h>

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

std::string decision(const storage::DetectionRow& d) {
  using storage::DetectionState;
  auto shift = base::signed_percent(d.change) + fmt::format(" (p={:.3g})", d.p_value);
  auto with_note = [&](std::string text) { return d.note.empty() ? text : text + ": " + d.note; };
  switch (d.state) {
  case DetectionState::baseline: return "baseline";
  case DetectionState::below_threshold:
    return with_note("below the threshold " + base::signed_percent(d.change) + ": new baseline");
  case DetectionState::confirming: return "confirming " + shift + " with interleaved reruns";
  case DetectionState::measuring_base: return with_note("confirmed " + shift + ", measuring the base first");
  case DetectionState::confirmed:
    return with_note("confirmed " + shift + ": bisection " + std::to_string(d.bisection_id));
  case DetectionState::rejected: return with_note("not confirmed " + shift + ": no bisection");
  case DetectionState::dropped_by_rewrite: return "confirmed " + shift + ", no bisection: " + d.note;
  case DetectionState::failed: return "failed: " + d.note;
  }
  return "";
}

json detection_json(const storage::DetectionRow& d) {
  return {{"id", d.id},
          {"tree", d.tree},
          {"branch", d.branch},
          {"job", d.job},
          {"metric", d.metric},
          {"good", null_if_empty(d.good)},
          {"bad", d.bad},
          {"change", d.change},
          {"p_value", d.p_value},
          {"state", to_string(d.state)},
          {"decision", decision(d)},
          {"rewritten", d.rewritten},
          {"base", null_if_empty(d.base)},
          {"note", null_if_empty(d.note)},
          {"request_id", d.request_id == 0 ? json(nullptr) : json(d.request_id)},
          {"bisection_id", d.bisection_id == 0 ? json(nullptr) : json(d.bisection_id)},
          {"created_at", iso_or_null(d.created_at)}};
}

} // namespace

HttpResponse get_detections(ApiContext& c, const Call& call) {
  auto page = parse_page(call.query, {});
  auto after = page ? page_after_id(*page) : Result<std::int64_t>(0);
  if (!page || !after) {
    return error_response(page ? after.error() : page.error());
  }
  auto rows = c.detections.detections(call.query_or("tree"));
  if (!rows) {
    return error_response(rows.error());
  }
  json next;
  auto out = page_of(
    *rows, *page, [&](const auto& d) { return d.id < *after; }, // newest first
    [](const auto& d) { return std::to_string(d.id); }, detection_json, next);
  return json_response(200, {{"detections", out}, {"next", next}});
}

} // namespace bisectd::daemon::api
