// `bisectctl report` says why there is no mail (issue #30): GET /bisections/ID/report's 404 names why there is no
// report, and a report carries what became of its mail. Through the API's handler, on the in-memory store.
#include "daemon/api/resources.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

namespace {

struct ReportApiWorld {
  test::TempDir tmp;
  test::MemoryStore store;
  test::FakeTrees repos{tmp.path()};
  test::FakeJobs jobs{daemon::Job{}};
  test::FakeLab lab{{}};
  test::FakeStarter starter;
  daemon::api::ApiContext context{.trees = store,
                                  .queue = store,
                                  .samples = store,
                                  .bisections = store,
                                  .detections = store,
                                  .outbox = store,
                                  .repos = repos,
                                  .jobs = jobs,
                                  .lab = lab,
                                  .starter = starter};

  ReportApiWorld() {
    storage::TreeRow tree;
    tree.name = "demo";
    tree.url = "/x";
    tree.job = "job";
    REQUIRE(store.add_tree(tree, {"job", "/x/job.yaml", "name: job", 0}));
  }

  // A bisection of tree demo in `state`, with `result` as its engine summary.
  storage::BisectionRow bisection(storage::BisectionState state, const std::string& result = "{}") {
    storage::BisectionRow b;
    b.tree = "demo";
    b.job = "job";
    b.good = b.range_good = "aaa";
    b.bad = b.range_bad = "bbb";
    b.id = store.add_bisection(b).value();
    b.state = state;
    b.result_json = result;
    return b;
  }

  nlohmann::json report(std::int64_t id, int& status) {
    daemon::api::Call call;
    call.params["id"] = std::to_string(id);
    auto response = daemon::api::get_report(context, call);
    status = response.status;
    return nlohmann::json::parse(response.body);
  }
};

storage::ReportRow report_to(std::vector<std::string> to, std::int64_t repeat_of = 0) {
  storage::ReportRow r;
  r.subject = "s";
  r.message_id = "<m@x>";
  r.text = "mail";
  r.to = std::move(to);
  r.repeat_of = repeat_of;
  return r;
}

} // namespace

TEST_CASE("api: a bisection without a report says why", "[api][report]") {
  ReportApiWorld w;
  int status = 0;
  auto running = w.bisection(storage::BisectionState::running);
  REQUIRE(w.store.update_bisection(running));
  CHECK(w.report(running.id, status)["error"] == "bisection 1 is still running: its report is written when it ends");
  CHECK(status == 404);

  auto failed = w.bisection(storage::BisectionState::failed);
  failed.error = "an endpoint (good or bad) cannot be built or run";
  REQUIRE(w.store.update_bisection(failed));
  CHECK(w.report(failed.id, status)["error"] ==
        "bisection 2 failed: an endpoint (good or bad) cannot be built or run; no report");

  auto cancelled = w.bisection(storage::BisectionState::cancelled);
  REQUIRE(w.store.update_bisection(cancelled));
  CHECK(w.report(cancelled.id, status)["error"] == "bisection 3 was cancelled: no report");

  auto flat = w.bisection(storage::BisectionState::not_found, R"({"verdict": "no_change"})");
  REQUIRE(w.store.finish_bisection(flat, std::nullopt));
  auto why = w.report(flat.id, status)["error"].get<std::string>();
  CHECK(why.find("bisection 4 found no change beyond the threshold: no report is written for no change") == 0);

  CHECK(w.report(99, status)["error"] == "bisection 99 not found");
}

TEST_CASE("api: a report says what became of its mail", "[api][report]") {
  ReportApiWorld w;
  int status = 0;
  auto nobody = w.bisection(storage::BisectionState::found);
  REQUIRE(w.store.finish_bisection(nobody, report_to({})));
  auto mail = w.report(nobody.id, status)["mail"];
  CHECK(status == 200);
  CHECK(mail["state"] == "not_mailed");
  CHECK(mail["why"].get<std::string>().find("no recipients: the tree is private and its notify list is empty") == 0);

  auto someone = w.bisection(storage::BisectionState::found);
  REQUIRE(w.store.finish_bisection(someone, report_to({"dev@example.org"})));
  CHECK(w.report(someone.id, status)["mail"] ==
        nlohmann::json{{"state", "pending"}, {"why", "waiting to be mailed"}});
  auto outbox = w.store.report_mail(w.store.report(someone.id).value()->id).value().value();
  REQUIRE(w.store.mark_mail_failed(outbox.id, "smtp: 550 no such user", 0, true));
  CHECK(w.report(someone.id, status)["mail"] ==
        nlohmann::json{{"state", "failed"}, {"why", "delivery failed for good: smtp: 550 no such user"}});
  REQUIRE(w.store.mark_mail_sent(outbox.id));
  CHECK(w.report(someone.id, status)["mail"]["state"] == "sent");

  auto repeat = w.bisection(storage::BisectionState::found);
  REQUIRE(w.store.finish_bisection(repeat, report_to({"dev@example.org"}, 2)));
  mail = w.report(repeat.id, status)["mail"];
  CHECK(mail["state"] == "not_mailed");
  CHECK(mail["why"].get<std::string>().find("it repeats the report of") == 0);
}

TEST_CASE("api: a running bisection says what it waits for: a queued request no machine can take", "[api]") {
  ReportApiWorld w;
  auto b = w.bisection(storage::BisectionState::running);
  REQUIRE(w.store.update_bisection(b));
  auto detail = [&] {
    daemon::api::Call call;
    call.params["id"] = std::to_string(b.id);
    auto response = daemon::api::get_bisection(w.context, call);
    REQUIRE(response.status == 200);
    return nlohmann::json::parse(response.body);
  };
  CHECK(detail()["waiting_for"].is_null()); // nothing queued
  storage::RequestRow r;
  r.tree = "demo";
  r.job = "job";
  r.commit = "aaa";
  r.purpose = storage::Purpose::bisect;
  r.bisection_id = b.id;
  r.machine_group = "arm";
  REQUIRE(w.store.enqueue(r));
  CHECK(detail()["waiting_for"] == "no machine is in group 'arm' (groups: none)"); // this lab has no machine at all
  b.state = storage::BisectionState::cancelled;
  REQUIRE(w.store.update_bisection(b));
  CHECK(detail()["waiting_for"].is_null()); // an ended bisection waits for nothing
}
