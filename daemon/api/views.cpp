#include "daemon/api/views.hpp"

#include "base/clock.hpp"
#include "base/strings.hpp"

namespace bisectd::daemon::api {

using nlohmann::json;

json null_if_empty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

json iso_or_null(std::int64_t unix_time) { return unix_time == 0 ? json(nullptr) : json(base::iso8601_utc(unix_time)); }

json tree_json(const storage::TreeRow& tree, storage::TreeStore& store) {
  json heads = json::object();
  json branches = json::object(); // each branch's watch: newest head, last measured head, why it is not watched
  for (const auto& branch : tree.branches) {
    auto head = store.head(tree.name, branch);
    auto row = head && *head ? **head : storage::HeadRow{};
    heads[branch] = null_if_empty(row.seen);
    branches[branch] = json{{"head", null_if_empty(row.seen)},
                            {"measured", null_if_empty(row.tested)},
                            {"error", null_if_empty(row.error)},
                            {"error_since", iso_or_null(row.error_at)}};
  }
  auto interval = tree.poll_interval_s;
  return json{
    {"name", tree.name},
    {"url", base::strip_url_userinfo(tree.url)}, // GET /trees needs no token: no credentials in it
    {"branches", tree.branches},
    {"job", tree.job},
    {"notify", tree.notify},
    {"mail_cc", tree.mail_cc},
    {"private", tree.is_private},
    {"poll_interval_s", tree.poll_interval_s},
    {"created_at", iso_or_null(tree.created_at)},
    {"heads", heads},
    {"branch_states", branches},
    {"polled_at", iso_or_null(tree.polled_at)},
    {"next_poll", tree.polled_at == 0 || interval <= 0 ? json(nullptr) : iso_or_null(tree.polled_at + interval)},
    {"watch_error", null_if_empty(tree.watch_error)},
    {"watch_error_since", iso_or_null(tree.watch_error_at)}};
}

json bisection_summary(const storage::BisectionRow& b, const std::string& culprit_subject) {
  return json{{"id", b.id},
              {"tree", b.tree},
              {"branch", b.branch},
              {"job", b.job},
              {"metric", b.metric},
              {"state", to_string(b.state)},
              {"good", b.good},
              {"bad", b.bad},
              {"culprit", null_if_empty(b.culprit)},
              {"culprit_subject", null_if_empty(culprit_subject)},
              {"p_culprit", b.p_culprit},
              {"runs", b.runs},
              {"builds", b.builds},
              {"boots", b.boots},
              {"machine_seconds", b.machine_seconds},
              {"runs_reused", b.runs_reused},
              {"created_at", iso_or_null(b.created_at)},
              {"finished_at", iso_or_null(b.finished_at)},
              {"origin", to_string(b.origin)}};
}

} // namespace bisectd::daemon::api
