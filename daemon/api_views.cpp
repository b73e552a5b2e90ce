// The read endpoints of the HTTP API.
#include "daemon/api_views.hpp"

#include "base/clock.hpp"
#include "base/strings.hpp"
#include "bisect/detect.hpp"
#include "daemon/api.hpp"

#include <cmath>
#include <numeric>

namespace bisectd::daemon {

using nlohmann::json;

namespace {

json null_if_empty(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json iso_or_null(std::int64_t t) { return t == 0 ? json(nullptr) : json(base::iso8601_utc(t)); }

} // namespace

std::string url_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

json tree_json(const storage::TreeRow& tree, storage::Store& store) {
  json heads = json::object();
  auto branches = json::parse(tree.branches_json, nullptr, false);
  for (const auto& b : branches) {
    auto head = store.head(tree.name, b.get<std::string>());
    heads[b.get<std::string>()] = head && *head ? null_if_empty((*head)->seen) : json(nullptr);
  }
  return json{{"name", tree.name},
              {"url", tree.url},
              {"branches", branches},
              {"job", tree.job},
              {"notify", json::parse(tree.notify_json, nullptr, false)},
              {"poll_interval_s", tree.poll_interval_s},
              {"created_at", iso_or_null(tree.created_at)},
              {"heads", heads}};
}

json bisection_summary(const storage::BisectionRow& b, const std::string& culprit_subject) {
  return json{{"id", b.id},
              {"tree", b.tree},
              {"branch", b.branch},
              {"job", b.job},
              {"metric", b.metric},
              {"state", b.state},
              {"good", b.good},
              {"bad", b.bad},
              {"culprit", null_if_empty(b.culprit)},
              {"culprit_subject", null_if_empty(culprit_subject)},
              {"p_culprit", b.p_culprit},
              {"runs", b.runs},
              {"builds", b.builds},
              {"created_at", iso_or_null(b.created_at)},
              {"finished_at", iso_or_null(b.finished_at)},
              {"origin", b.origin}};
}

json Api::machines_json() {
  json out = json::array();
  std::lock_guard lock(m_context.machines_mutex);
  for (const auto& slot : m_context.machines) {
    const auto& spec = slot.machine->spec();
    out.push_back({{"name", spec.name},
                   {"group", spec.group},
                   {"backend", spec.backend},
                   {"description", spec.description},
                   {"state", slot.busy ? "busy" : "idle"},
                   {"current", null_if_empty(slot.current)}});
  }
  return out;
}

HttpResponse Api::status() {
  json queue = {{"queued", 0}, {"building", 0}, {"running", 0}, {"done", 0}, {"failed", 0}};
  for (const auto& [state, n] : m_context.store->request_counts().value_or(std::map<std::string, std::int64_t>{})) {
    queue[state] = n;
  }
  json bisections = {{"running", 0}, {"found", 0}, {"not_found", 0}, {"failed", 0}};
  for (const auto& b : m_context.store->bisections().value_or(std::vector<storage::BisectionRow>{})) {
    bisections[b.state] = bisections.value(b.state, 0) + 1;
  }
  return HttpResponse{200, json{{"version", BISECTD_VERSION},
                                {"uptime_s", base::unix_now() - m_context.started_at},
                                {"data_dir", m_context.config.data_dir.string()},
                                {"queue", queue},
                                {"bisections", bisections},
                                {"machines", machines_json()}}
                             .dump()};
}

HttpResponse Api::trees() {
  json out = json::array();
  for (const auto& tree : m_context.store->trees().value_or(std::vector<storage::TreeRow>{})) {
    out.push_back(tree_json(tree, *m_context.store));
  }
  return HttpResponse{200, json{{"trees", out}}.dump()};
}

HttpResponse Api::jobs() {
  json out = json::array();
  for (const auto& row : m_context.store->jobs().value_or(std::vector<storage::JobRow>{})) {
    json entry = {{"name", row.name}, {"path", row.path}, {"yaml", row.yaml}};
    if (auto job = m_context.jobs->get(row.name)) {
      entry["primary"] = (*job)->metrics.primary;
      entry["direction"] = (*job)->metrics.direction == bisect::Direction::higher_is_better ? "higher_is_better"
                                                                                            : "lower_is_better";
      entry["threshold"] = (*job)->metrics.threshold;
    }
    out.push_back(entry);
  }
  return HttpResponse{200, json{{"jobs", out}}.dump()};
}

HttpResponse Api::bisections(const std::map<std::string, std::string>& query) {
  auto tree = query.contains("tree") ? query.at("tree") : "";
  auto state = query.contains("state") ? query.at("state") : "";
  auto rows = m_context.store->bisections(tree, state);
  if (!rows) {
    return error_response(500, rows.error().message);
  }
  json out = json::array();
  for (const auto& b : *rows) {
    out.push_back(bisection_summary(b, ""));
  }
  return HttpResponse{200, json{{"bisections", out}}.dump()};
}

HttpResponse Api::report(std::int64_t id) {
  auto row = m_context.store->report(id);
  if (!row || !*row) {
    return error_response(404, "bisection " + std::to_string(id) + " has no report (yet)");
  }
  const auto& r = **row;
  return HttpResponse{200, json{{"subject", r.subject},
                                {"from", r.sender},
                                {"to", json::parse(r.to_json, nullptr, false)},
                                {"cc", json::parse(r.cc_json, nullptr, false)},
                                {"message_id", r.message_id},
                                {"in_reply_to", null_if_empty(r.in_reply_to)},
                                {"body", r.body},
                                {"text", r.text},
                                {"sent", r.sent}}
                             .dump()};
}

HttpResponse Api::results(const std::string& commit, const std::map<std::string, std::string>& query) {
  if (commit.size() < 7 || commit.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return error_response(400, "commit: '" + commit + "' must be at least 7 hex digits");
  }
  auto rows = m_context.store->samples_for_commit_prefix(commit, query.contains("tree") ? query.at("tree") : "");
  if (!rows) {
    return error_response(500, rows.error().message);
  }
  json samples = json::array();
  for (const auto& s : *rows) {
    samples.push_back({{"job", s.job},
                       {"commit", s.commit},
                       {"variant", s.variant},
                       {"machine", s.machine},
                       {"boot_id", s.boot_id},
                       {"run", s.run},
                       {"metrics", json::parse(s.metrics_json, nullptr, false)},
                       {"created_at", iso_or_null(s.created_at)}});
  }
  return HttpResponse{200, json{{"commit", commit}, {"samples", samples}}.dump()};
}

HttpResponse Api::noise(const std::map<std::string, std::string>& query) {
  auto job_name = query.contains("job") ? query.at("job") : "";
  auto tree = query.contains("tree") ? query.at("tree") : "";
  auto rows = m_context.store->samples_for_job(job_name);
  if (!rows) {
    return error_response(500, rows.error().message);
  }
  // The shift the runs are sized for: the job's threshold (the smallest change that may open a bisection).
  auto job = m_context.jobs->get(job_name);
  double threshold = job ? (*job)->metrics.threshold : 0.0;
  // One series per metric: commits in the order they were first measured.
  std::map<std::string, std::vector<bisect::SeriesPoint>> series;
  std::map<std::string, std::map<std::string, std::size_t>> position;
  for (const auto& s : *rows) {
    if ((!tree.empty() && s.tree != tree) || !s.variant.empty()) {
      continue;
    }
    auto metrics = json::parse(s.metrics_json, nullptr, false);
    for (const auto& [name, value] : metrics.items()) {
      if (!value.is_number()) {
        continue;
      }
      auto [it, inserted] = position[name].try_emplace(s.commit, series[name].size());
      if (inserted) {
        series[name].push_back({s.commit, {}});
      }
      series[name][it->second].samples.push_back(value.get<double>());
    }
  }
  json out = json::array();
  for (const auto& [name, points] : series) {
    auto estimate = bisect::estimate_noise(points);
    json entry = {{"name", name},
                  {"commits", estimate.commits},
                  {"runs", estimate.runs},
                  {"run_sigma_pct", 100.0 * estimate.run_sigma},
                  {"commit_sigma_pct", 100.0 * estimate.commit_sigma},
                  {"heavy_tailed", estimate.heavy_tailed},
                  {"bimodal", estimate.bimodal}};
    // -1: more runs per commit cannot make a threshold-sized shift visible (commit jitter alone is too big).
    entry["runs_for_threshold"] = threshold > 0 ? json(estimate.runs_for(threshold)) : json(nullptr);
    entry["confirm_runs_for_threshold"] = threshold > 0 ? json(estimate.confirm_runs_for(threshold)) : json(nullptr);
    out.push_back(entry);
  }
  json body = {{"tree", tree}, {"job", job_name}, {"metrics", out}};
  body["threshold"] = threshold > 0 ? json(threshold) : json(nullptr);
  return HttpResponse{200, body.dump()};
}

} // namespace bisectd::daemon
