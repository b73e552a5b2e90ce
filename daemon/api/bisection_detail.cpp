// GET /api/v1/bisections/ID: the summary plus tested commits, events and the engine's result.
#include "base/clock.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/core/unplaceable.hpp"
#include "report/change_table.hpp"

#include <algorithm>
#include <cmath>

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

std::string subject_of(vcs::Repo& repo, const std::string& sha) {
  auto commit = repo.commit(sha);
  return commit ? commit->subject : std::string();
}

struct CommitView {
  std::string sha, subject;
  std::vector<double> samples;
  bool skipped = false, pending = false;
  std::string skipped_because; // the flags that skip it, with their reasons
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
  json out{{"commit", c.sha},      {"subject", c.subject}, {"index", index},      {"status", status},
           {"samples", c.samples}, {"mean", mean},         {"stddev_pct", sd_pct}};
  if (c.skipped) {
    out["skipped_because"] = c.skipped_because;
  }
  return out;
}

// The chain's commits with their subjects and the culprit's subject.
Status load_chain(TreeRepos& repos, const storage::BisectionRow& b, std::vector<CommitView>& chain,
                  std::string& culprit_subject) {
  return repos.with_repo(b.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(auto shas, repo.first_parent_chain(b.range_good, b.range_bad));
    for (const auto& sha : shas) {
      chain.push_back({sha, subject_of(repo, sha), {}, false, false, ""});
    }
    if (!b.culprit.empty()) {
      culprit_subject = subject_of(repo, b.culprit);
    }
    return {};
  });
}

// Samples, skip and pending state of each chain commit; the culprit's index.
std::optional<std::size_t> fill_chain(ApiContext& c, const storage::BisectionRow& b,
                                      const std::vector<storage::RequestRow>& requests,
                                      std::vector<CommitView>& chain) {
  std::optional<std::size_t> culprit_index;
  auto job = c.jobs.get(b.job);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    auto& view = chain[i];
    for (const auto& s :
         c.samples.metric_samples(b.job, {view.sha}, b.metric).value_or(std::vector<storage::MetricSample>{})) {
      if (s.value > 0) {
        view.samples.push_back(s.value);
      }
    }
    if (job) { // flags of the job as it is defined now, as the driver reads them
      auto key = flag_key(**job, view.sha);
      view.skipped = c.samples.flags(key).value_or(storage::CommitFlags{}).is_skipped();
      view.skipped_because = view.skipped ? skipped_because(c, key) : "";
    }
    view.pending =
      std::any_of(requests.begin(), requests.end(), [&](const auto& r) { return r.commit == view.sha && r.is_open(); });
    if (view.sha == b.culprit) {
      culprit_index = i;
    }
  }
  return culprit_index;
}

// What the report compared, with subjects: the culprit, its real parent and the commit measured in the parent's
// place when it shares that commit's binary (null otherwise); null before the bisection has an answer.
json compared_json(TreeRepos& repos, const storage::BisectionRow& b, const json& result) {
  auto compared = result.value("compared", json());
  if (!compared.is_object()) {
    return nullptr;
  }
  json out = json::object();
  (void)repos.with_repo(b.tree, [&](vcs::Repo& repo) -> Status {
    for (const char* key : {"culprit", "parent", "same_binary_as"}) {
      auto sha = compared.value(key, json());
      out[key] =
        sha.is_string() ? json{{"commit", sha}, {"subject", subject_of(repo, sha.get<std::string>())}} : json(nullptr);
    }
    return {};
  });
  return out;
}

// The bisection's requests, so that each can be looked into (`bisectctl logs KIND ID`).
json requests_json(const std::vector<storage::RequestRow>& requests) {
  json out = json::array();
  for (const auto& r : requests) {
    out.push_back({{"id", r.id},
                   {"commit", r.commit},
                   {"purpose", to_string(r.purpose)},
                   {"variant", r.variant},
                   {"state", to_string(r.state)},
                   {"machine", null_if_empty(r.machine)},
                   {"attempts", r.attempts},
                   {"error", null_if_empty(r.error)}});
  }
  return out;
}

} // namespace

HttpResponse get_bisection(ApiContext& c, const Call& call) {
  auto id = std::stoll(call.params.at("id"));
  auto row = c.bisections.bisection(id);
  if (!row || !*row) {
    return error_response(404, "bisection " + std::to_string(id) + " not found");
  }
  const auto& b = **row;
  std::vector<CommitView> chain;
  std::string culprit_subject;
  auto loaded = load_chain(c.repos, b, chain, culprit_subject);
  auto out = bisection_summary(b, culprit_subject);
  auto requests = c.queue.requests_for_bisection(b.id).value_or(std::vector<storage::RequestRow>{});
  auto culprit_index = loaded ? fill_chain(c, b, requests, chain) : std::nullopt;
  json tested = json::array();
  for (std::size_t i = 0; i < chain.size(); ++i) {
    if (!chain[i].samples.empty() || chain[i].skipped || chain[i].pending) {
      tested.push_back(commit_json(chain[i], i, culprit_index));
    }
  }
  auto result = json::parse(b.result_json, nullptr, false);
  if (!result.is_object()) {
    result = json::object();
  }
  auto verification = json::parse(b.verification_json, nullptr, false);
  out["credible_set"] = result.value("credible_set", json::array());
  out["shift"] = result.value("shift", json::object());
  out["compared"] = compared_json(c.repos, b, result);
  out["verification"] = verification.is_object() ? verification : json::object();
  out["verdict"] = result.value("verdict", "");
  out["p_no_change"] = result.value("p_no_change", json(nullptr));
  out["threshold"] = result.value("threshold", json(nullptr)); // the job's, which "no change" is about
  out["merge"] = null_if_empty(b.merge); // the merge the search recursed through, if any
  out["trace"] = result.value("trace", json::array());
  out["chain_length"] = chain.size();
  out["tested"] = tested;
  out["requests"] = requests_json(requests);
  auto waiting = b.state == storage::BisectionState::running ? waiting_for(requests, c.lab.machines()) : std::nullopt;
  out["waiting_for"] = waiting ? json(*waiting) : json(nullptr); // a queued request no machine can take, and why
  out["error"] = b.error.empty() ? json(nullptr) : json(b.error);
  if (!loaded) {
    out["error"] = loaded.error().message;
  }
  json events = json::array();
  for (const auto& e : c.bisections.events(b.id).value_or(std::vector<storage::EventRow>{})) {
    events.push_back({{"at", base::iso8601_utc(e.at)}, {"message", e.message}});
  }
  out["events"] = events;
  return json_response(200, out);
}

} // namespace bisectd::daemon::api
