// What `bisectctl queue` and `bisectctl report` read (issue #30): the open requests, oldest first, and the outbox row
// of a report (none for a repeat, which is never mailed).
#include "base/fs.hpp"
#include "storage/store.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace bisectd;
using namespace bisectd::storage;

namespace {

RequestRow open_request(const std::string& commit) {
  RequestRow r;
  r.tree = "demo";
  r.job = "job";
  r.commit = commit;
  r.purpose = Purpose::watch;
  r.machine_group = "local";
  return r;
}

BisectionRow finished(Store& store, const std::string& culprit) {
  BisectionRow b;
  b.tree = "demo";
  b.branch = "master";
  b.job = "job";
  b.metric = "x";
  b.good = b.range_good = "aaa";
  b.bad = b.range_bad = "bbb";
  b.id = store.add_bisection(b).value();
  b.state = BisectionState::found;
  b.culprit = culprit;
  return b;
}

ReportRow report_of(const std::string& message_id, std::int64_t repeat_of) {
  ReportRow r;
  r.subject = "s";
  r.sender = "bisectd <b@localhost>";
  r.message_id = message_id;
  r.text = "mail";
  r.repeat_of = repeat_of;
  return r;
}

} // namespace

TEST_CASE("storage::Store open_requests: queued, building and running, oldest first", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-store-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    auto done = store->enqueue(open_request("a")).value();
    auto failed = store->enqueue(open_request("b")).value();
    auto running = store->enqueue(open_request("c")).value();
    auto queued = store->enqueue(open_request("d")).value();
    REQUIRE(store->finish_request(done, {}));
    REQUIRE(store->fail_request(failed, "build_failed", "no", std::nullopt));
    REQUIRE(store->set_request_state(running, RequestState::running));
    auto open = store->open_requests().value();
    REQUIRE(open.size() == 2);
    CHECK(open[0].id == running);
    CHECK(open[0].state == RequestState::running);
    CHECK(open[1].id == queued);
    CHECK(open[1].state == RequestState::queued);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("storage::Store report_mail: the outbox row of a report, none for a repeat", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-store-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    auto first = finished(*store, "ccc");
    REQUIRE(store->finish_bisection(first, report_of("<1@localhost>", 0)));
    auto first_report = store->report(first.id).value().value();
    auto mail = store->report_mail(first_report.id).value();
    REQUIRE(mail);
    CHECK(mail->state == OutboxState::pending);
    REQUIRE(store->mark_mail_failed(mail->id, "mail: no recipients", 0, true));
    mail = store->report_mail(first_report.id).value();
    CHECK(mail->state == OutboxState::failed);
    CHECK(mail->last_error == "mail: no recipients");

    auto repeat = finished(*store, "ccc");
    REQUIRE(store->finish_bisection(repeat, report_of("<2@localhost>", first_report.id)));
    CHECK_FALSE(store->report_mail(store->report(repeat.id).value()->id).value());
  }
  std::filesystem::remove_all(dir);
}
