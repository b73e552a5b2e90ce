// GET (list), POST (start) of bisections, and a bisection's report.
#include "daemon/api/body.hpp"
#include "daemon/api/page.hpp"
#include "daemon/api/resources.hpp"
#include "daemon/api/views.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::daemon::api {

using nlohmann::json;

HttpResponse get_bisections(ApiContext& c, const Call& call) {
  auto tree = call.query_or("tree");
  auto state_name = call.query_or("state");
  auto page = parse_page(call.query, {});
  auto after = page ? page_after_id(*page) : Result<std::int64_t>(0);
  if (!page || !after) {
    return error_response(page ? after.error() : page.error());
  }
  auto state = storage::parse_bisection_state(state_name);
  if (!state_name.empty() && !state) { // no bisection is in a state that does not exist
    return json_response(200, {{"bisections", json::array()}, {"next", nullptr}});
  }
  auto rows = c.bisections.bisections(tree, state);
  if (!rows) {
    return error_response(500, rows.error().message);
  }
  json next;
  auto out = page_of(
    *rows, *page, [&](const auto& b) { return b.id < *after; }, // newest first
    [](const auto& b) { return std::to_string(b.id); }, [](const auto& b) { return bisection_summary(b, ""); }, next);
  return json_response(200, {{"bisections", out}, {"next", next}});
}

namespace {

// The bisection of the report that `r` repeats: the first report of the same culprit for the same tree and job.
json repeat_of_bisection(ApiContext& c, const storage::ReportRow& r) {
  if (r.repeat_of == 0) {
    return nullptr;
  }
  auto b = c.bisections.bisection(r.bisection_id);
  if (!b || !*b) {
    return nullptr;
  }
  auto first = c.bisections.first_report((*b)->tree, (*b)->job, (*b)->culprit, r.bisection_id);
  return first && *first && (*first)->id == r.repeat_of ? json((*first)->bisection_id) : json(nullptr);
}

} // namespace

HttpResponse get_report(ApiContext& c, const Call& call) {
  auto id = std::stoll(call.params.at("id"));
  auto b = c.bisections.bisection(id);
  if (!b || !*b) {
    return error_response(404, "bisection " + std::to_string(id) + " not found");
  }
  auto row = c.bisections.report(id);
  if (!row) {
    return error_response(row.error());
  }
  if (!*row) {
    return error_response(404, no_report_reason(c, **b));
  }
  auto all = query_flag(call, "all");
  if (!all) {
    return error_response(all.error());
  }
  const auto& r = **row;
  // ?all=1: the same report with every significant row of its table (the mail caps them).
  const std::string& text = *all && !r.text_all.empty() ? r.text_all : r.text;
  auto repeat_of = repeat_of_bisection(c, r);
  return json_response(200, {{"subject", r.subject},
                             {"from", r.sender},
                             {"to", r.to},
                             {"cc", r.cc},
                             {"message_id", r.message_id},
                             {"in_reply_to", null_if_empty(r.in_reply_to)},
                             {"body", r.body},
                             {"text", text},
                             {"sent", r.sent},
                             // the bisection whose report this one repeats (then never mailed), else null
                             {"repeat_of", repeat_of},
                             {"mail", report_mail_json(c, r, repeat_of)}});
}

namespace {

HttpResponse start_bisection(ApiContext& c, const std::string& tree_name, const std::string& good,
                             const std::string& bad, const std::string& job_name) {
  auto tree = c.trees.tree(tree_name);
  if (!tree || !*tree) {
    return error_response(404, "tree: '" + tree_name + "' not found");
  }
  if (good.empty() || bad.empty()) {
    return error_response(400, good.empty() ? "good: missing" : "bad: missing");
  }
  auto job = job_name.empty() ? (*tree)->job : job_name;
  std::string branch = (*tree)->branches.empty() ? "" : (*tree)->branches.front();
  auto id = c.starter.start({tree_name, branch, good, bad, job, "", storage::Origin::manual});
  if (!id) {
    return error_response(id.error());
  }
  return json_response(201, {{"id", *id}});
}

} // namespace

HttpResponse cancel_bisection(ApiContext& c, const Call& call) {
  auto id = std::stoll(call.params.at("id"));
  if (auto cancelled = c.bisections.cancel_bisection(id); !cancelled) {
    return error_response(cancelled.error());
  }
  (void)c.bisections.add_event(id, "cancelled by the operator");
  spdlog::info("bisection {} cancelled", id);
  return json_response(200, {{"id", id}, {"state", "cancelled"}});
}

HttpResponse retry_bisection(ApiContext& c, const Call& call) {
  auto id = std::stoll(call.params.at("id"));
  if (auto retried = c.bisections.retry_bisection(id); !retried) {
    return error_response(retried.error());
  }
  (void)c.bisections.add_event(id, "retried by the operator: running again from its samples");
  spdlog::info("bisection {} retried", id);
  if (c.wake) {
    c.wake();
  }
  return json_response(200, {{"id", id}, {"state", "running"}});
}

HttpResponse delete_bisection(ApiContext& c, const Call& call) {
  auto id = std::stoll(call.params.at("id"));
  auto purge = call.query_or("purge");
  auto purged = c.bisections.delete_bisection(id, purge == "1" || purge == "true");
  if (!purged) {
    return error_response(purged.error());
  }
  spdlog::info("bisection {} removed ({} samples purged)", id, *purged);
  return json_response(200, {{"removed", id}, {"purged_samples", *purged}});
}

HttpResponse post_bisection(ApiContext& c, const Call& call) {
  const auto& body = call.body;
  auto tree_name = string_field(body, "tree");
  auto good = string_field(body, "good");
  auto bad = string_field(body, "bad");
  auto job_name = string_field(body, "job");
  for (const auto* field : {&tree_name, &good, &bad, &job_name}) {
    if (!*field) {
      return error_response(field->error());
    }
  }
  return start_bisection(c, *tree_name, *good, *bad, *job_name);
}

} // namespace bisectd::daemon::api
