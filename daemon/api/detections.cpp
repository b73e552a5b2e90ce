// GET every head comparison the watcher made and what it decided.
#include "base/strings.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"

#include <fmt/format.h>

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

std::string decision(const storage::DetectionRow& d) {
  auto shift = base::signed_percent(d.change) + fmt::format(" (p={:.3g})", d.p_value);
  switch (d.state) {
  case storage::DetectionState::confirming: return "confirming " + shift + " with interleaved reruns";
  case storage::DetectionState::confirmed:
    return "confirmed " + shift + ": bisection " + std::to_string(d.bisection_id);
  case storage::DetectionState::rejected: return "not confirmed " + shift + ": no bisection";
  }
  return "";
}

} // namespace

HttpResponse get_detections(ApiContext& c, const Call& call) {
  auto rows = c.detections.detections(call.query_or("tree"));
  if (!rows) {
    return error_response(rows.error());
  }
  json out = json::array();
  for (const auto& d : *rows) {
    out.push_back({{"id", d.id},
                   {"tree", d.tree},
                   {"branch", d.branch},
                   {"job", d.job},
                   {"metric", d.metric},
                   {"good", d.good},
                   {"bad", d.bad},
                   {"change", d.change},
                   {"p_value", d.p_value},
                   {"state", to_string(d.state)},
                   {"decision", decision(d)},
                   {"bisection_id", d.bisection_id == 0 ? json(nullptr) : json(d.bisection_id)},
                   {"created_at", iso_or_null(d.created_at)}});
  }
  return json_response(200, {{"detections", out}});
}

} // namespace bisectd::daemon::api
