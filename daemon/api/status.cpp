// GET status, machines, jobs.
#include "base/clock.hpp"
#include "daemon/api/body.hpp"
#include "daemon/api/page.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

json machines_json(const LabView& lab) {
  json out = json::array();
  for (const auto& m : lab.machines()) {
    out.push_back({{"name", m.name},
                   {"group", m.group},
                   {"backend", m.backend},
                   {"description", m.description},
                   {"state", m.quarantined ? "quarantined"
                             : m.busy      ? "busy"
                                           : "idle"},
                   {"current", null_if_empty(m.current)},
                   {"quarantine_reason", null_if_empty(m.quarantine_reason)}});
  }
  return out;
}

} // namespace

HttpResponse get_machines(ApiContext& c, const Call&) {
  return json_response(200, {{"machines", machines_json(c.lab)}});
}

HttpResponse post_machine_release(ApiContext& c, const Call& call) {
  const auto& name = call.params.at("name");
  if (!c.release_machine) {
    return error_response(404, "no machine named '" + name + "'");
  }
  auto released = c.release_machine(name);
  if (!released) {
    return error_response(released.error());
  }
  if (!*released) {
    return error_response(409, "machine " + name + " is not quarantined");
  }
  return json_response(200, {{"machine", name}, {"state", "idle"}});
}

// Checks a machine now, without a visit (blocks this pool thread for the checks' ssh round trips; with power: true,
// for the power cycle and the wait for the box). 200 with every line, `ok` false when a needed check failed.
HttpResponse post_machine_check(ApiContext& c, const Call& call) {
  const auto& name = call.params.at("name");
  auto power = bool_field(call.body, "power", false);
  if (!power) {
    return error_response(power.error());
  }
  if (!c.check_machine) {
    return error_response(404, "no machine named '" + name + "'");
  }
  auto lines = c.check_machine(name, lab::CheckOptions{*power});
  if (!lines) {
    return error_response(lines.error());
  }
  json checks = json::array();
  for (const auto& line : *lines) {
    checks.push_back({{"check", line.name}, {"ok", line.ok}, {"needed", line.needed}, {"detail", line.detail}});
  }
  return json_response(200, {{"machine", name}, {"ok", lab::check_passed(*lines)}, {"checks", checks}});
}

// Trees whose last fetch failed: what an operator must look at first.
json watch_errors_json(storage::TreeStore& trees) {
  json out = json::array();
  for (const auto& tree : trees.trees().value_or(std::vector<storage::TreeRow>{})) {
    if (!tree.watch_error.empty()) {
      out.push_back({{"tree", tree.name}, {"error", tree.watch_error}, {"since", iso_or_null(tree.watch_error_at)}});
    }
  }
  return out;
}

HttpResponse get_status(ApiContext& c, const Call&) {
  json queue = {{"queued", 0}, {"building", 0}, {"running", 0}, {"done", 0}, {"failed", 0}};
  for (const auto& [state, n] : c.queue.request_counts().value_or(std::map<std::string, std::int64_t>{})) {
    queue[state] = n;
  }
  json bisections = {{"running", 0}, {"found", 0}, {"not_found", 0}, {"failed", 0}};
  for (const auto& b : c.bisections.bisections().value_or(std::vector<storage::BisectionRow>{})) {
    auto state = std::string(to_string(b.state));
    bisections[state] = bisections.value(state, 0) + 1;
  }
  return json_response(200, {{"version", BISECTD_VERSION},
                             {"uptime_s", base::unix_now() - c.started_at},
                             {"data_dir", c.data_dir.string()},
                             {"sandboxed", c.unsandboxed_because.empty()},
                             {"unsandboxed_because", null_if_empty(c.unsandboxed_because)},
                             {"queue", queue},
                             {"bisections", bisections},
                             {"machines", machines_json(c.lab)},
                             {"watch_errors", watch_errors_json(c.trees)}});
}

namespace {

// The trees whose job `name` is, in name order.
json trees_using(const std::vector<storage::TreeRow>& trees, const std::string& name) {
  json out = json::array();
  for (const auto& tree : trees) {
    if (tree.job == name) {
      out.push_back(tree.name);
    }
  }
  return out;
}

json job_json(ApiContext& c, const storage::JobRow& row, const std::vector<storage::TreeRow>& trees) {
  json entry = {{"name", row.name}, {"path", row.path}, {"yaml", row.yaml}, {"trees", trees_using(trees, row.name)}};
  if (auto job = c.jobs.get(row.name)) {
    entry["primary"] = (*job)->metrics.primary;
    entry["direction"] =
      (*job)->metrics.direction == bisect::Direction::higher_is_better ? "higher_is_better" : "lower_is_better";
    entry["threshold"] = (*job)->metrics.threshold;
  }
  return entry;
}

} // namespace

HttpResponse get_jobs(ApiContext& c, const Call& call) {
  auto page = parse_page(call.query, {});
  if (!page) {
    return error_response(page.error());
  }
  auto trees = c.trees.trees().value_or(std::vector<storage::TreeRow>{});
  json next;
  auto out = page_of(
    c.trees.jobs().value_or(std::vector<storage::JobRow>{}), *page,
    [&](const auto& row) { return row.name > page->after; }, // by name
    [](const auto& row) { return row.name; }, [&](const auto& row) { return job_json(c, row, trees); }, next);
  return json_response(200, {{"jobs", out}, {"next", next}});
}

} // namespace bisectd::daemon::api
