// GET /api/v1/bisections/ID: the summary plus tested commits, events and the engine's result.
#include "base/clock.hpp"
#include "report/change_table.hpp"
#include "daemon/api.hpp"
#include "daemon/api_views.hpp"

#include <cmath>
#include <numeric>

namespace bisectd::daemon {

using nlohmann::json;

namespace {

std::string subject_of(vcs::Repository& repo, const std::string& sha) {
  auto commit = repo.commit(sha);
  return commit ? commit->subject : std::string();
}

struct CommitView {
  std::string sha, subject;
  std::vector<double> samples;
  bool skipped = false, pending = false;
};

json commit_json(const CommitView& c, std::size_t index, std::optional<std::size_t> culprit) {
  std::string status = "untested";
  if (c.skipped) {
    status = "skipped";
  } else if (c.pending) {
    status = "pending";
  } else if (!c.samples.empty()) {
    status = !culprit ? "tested" : (index < *culprit ? "good" : "bad");
  }
  double mean = report::mean(c.samples);
  double sd_pct = mean == 0 ? 0 : 100.0 * report::population_stddev(c.samples) / mean; // LKP: population sigma
  return json{{"commit", c.sha}, {"subject", c.subject}, {"index", index},  {"status", status},
              {"samples", c.samples}, {"mean", mean}, {"stddev_pct", sd_pct}};
}

} // namespace

HttpResponse Api::bisection(std::int64_t id) {
  auto row = m_context.store->bisection(id);
  if (!row || !*row) {
    return error_response(404, "bisection " + std::to_string(id) + " not found");
  }
  const auto& b = **row;
  std::vector<CommitView> chain;
  std::string culprit_subject;
  auto loaded = m_context.trees->with_repo(b.tree, [&](vcs::Repository& repo) -> Status {
    BISECTD_TRY_ASSIGN(auto shas, repo.first_parent_chain(b.range_good, b.range_bad));
    for (const auto& sha : shas) {
      CommitView view;
      view.sha = sha;
      view.subject = subject_of(repo, sha);
      chain.push_back(std::move(view));
    }
    if (!b.culprit.empty()) {
      culprit_subject = subject_of(repo, b.culprit);
    }
    return {};
  });
  auto out = bisection_summary(b, culprit_subject);
  std::optional<std::size_t> culprit_index;
  auto requests = m_context.store->requests_for_bisection(b.id).value_or(std::vector<storage::RequestRow>{});
  for (std::size_t i = 0; loaded && i < chain.size(); ++i) {
    auto& c = chain[i];
    for (const auto& s : m_context.store->samples(b.job, {c.sha}).value_or(std::vector<storage::SampleRow>{})) {
      if (auto v = metric_value(s, b.metric)) {
        c.samples.push_back(*v);
      }
    }
    auto flags = m_context.store->flags(b.job, c.sha).value_or(std::map<std::string, std::int64_t>{});
    c.skipped = flags["unbuildable"] > 0 || flags["unbootable"] >= 2 || flags["unrunnable"] > 0;
    c.pending = std::any_of(requests.begin(), requests.end(), [&](const auto& r) {
      return r.commit == c.sha && (r.state == "queued" || r.state == "building" || r.state == "running");
    });
    if (c.sha == b.culprit) {
      culprit_index = i;
    }
  }
  json tested = json::array();
  for (std::size_t i = 0; i < chain.size(); ++i) {
    if (!chain[i].samples.empty() || chain[i].skipped || chain[i].pending) {
      tested.push_back(commit_json(chain[i], i, culprit_index));
    }
  }
  auto result = json::parse(b.result_json, nullptr, false);
  out["credible_set"] = result.value("credible_set", json::array());
  out["shift"] = result.value("shift", json::object());
  out["verification"] = result.value("verification", json::object());
  out["verdict"] = result.value("verdict", "");
  out["merge"] = result.value("merge", json(nullptr)); // the merge the search recursed through, if any
  out["trace"] = result.value("trace", json::array());
  out["chain_length"] = chain.size();
  out["tested"] = tested;
  out["error"] = b.error.empty() ? json(nullptr) : json(b.error);
  if (!loaded) {
    out["error"] = loaded.error().message;
  }
  json events = json::array();
  for (const auto& e : m_context.store->events(b.id).value_or(std::vector<storage::EventRow>{})) {
    events.push_back({{"at", base::iso8601_utc(e.at)}, {"message", e.message}});
  }
  out["events"] = events;
  return HttpResponse{200, out.dump()};
}

} // namespace bisectd::daemon
