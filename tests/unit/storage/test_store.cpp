#include "storage/store.hpp"

#include "base/fs.hpp"
#include "storage/schema.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::storage;

namespace {

struct TempStore {
  std::filesystem::path dir = base::make_temp_dir("bisectd-store-").value();
  std::unique_ptr<Store> store = Store::open(dir / "bisectd.db").value();
  ~TempStore() { std::filesystem::remove_all(dir); }
};

RequestRow request(const std::string& commit, const std::string& group = "local") {
  RequestRow r;
  r.tree = "demo";
  r.job = "job";
  r.commit = commit;
  r.purpose = "bisect";
  r.machine_group = group;
  r.runs = 3;
  return r;
}

SampleRow sample(const std::string& commit, int run) {
  SampleRow s;
  s.tree = "demo";
  s.job = "job";
  s.commit = commit;
  s.machine = "m0";
  s.boot_id = "boot-1";
  s.run = run;
  s.metrics_json = R"({"x": 1.5})";
  return s;
}

} // namespace

TEST_CASE("storage::Store adds a tree with its job atomically and refuses duplicates", "[storage]") {
  TempStore t;
  TreeRow tree;
  tree.name = "demo";
  tree.url = "/tmp/demo";
  tree.job = "job";
  REQUIRE(t.store->add_tree(tree, JobRow{"job", "/x/job.yaml", "name: job", 0}));
  auto again = t.store->add_tree(tree, JobRow{"job", "/x/job.yaml", "name: job", 0});
  REQUIRE_FALSE(again);
  CHECK(again.error().code == ErrorCode::conflict);
  CHECK(t.store->trees().value().size() == 1);
  CHECK(t.store->job("job").value()->yaml == "name: job");
  REQUIRE(t.store->remove_tree("demo"));
  CHECK(t.store->trees().value().empty());
  CHECK(t.store->remove_tree("demo").error().code == ErrorCode::not_found);
  REQUIRE(t.store->add_tree(tree, JobRow{"job", "/x/job.yaml", "name: job", 0})); // re-add after removal
}

TEST_CASE("storage::Store queue: claim, finish, requeue after a crash", "[storage]") {
  TempStore t;
  auto first = t.store->enqueue(request("aaa")).value();
  auto second = t.store->enqueue(request("bbb")).value();
  t.store->enqueue(request("ccc", "qemu")).value();

  auto claimed = t.store->claim_request("local", "m0").value();
  REQUIRE(claimed);
  CHECK(claimed->id == first);
  CHECK(claimed->state == "building");
  CHECK(claimed->attempts == 1);

  REQUIRE(t.store->finish_request(first, {sample("aaa", 0), sample("aaa", 1)}));
  CHECK(t.store->request(first).value()->state == "done");
  CHECK(t.store->samples("job", {"aaa"}).value().size() == 2);

  // A claimed request whose daemon died goes back to the queue; nothing of it was stored.
  auto interrupted = t.store->claim_request("local", "m0").value();
  REQUIRE(interrupted->id == second);
  CHECK(t.store->requeue_interrupted().value() == 1);
  CHECK(t.store->request(second).value()->state == "queued");
  CHECK(t.store->samples("job", {"bbb"}).value().empty());
}

TEST_CASE("storage::Store finish_request is all or nothing", "[storage]") {
  TempStore t;
  auto id = t.store->enqueue(request("aaa")).value();
  // The same (request, boot, run) twice violates the unique key: nothing may be stored.
  auto status = t.store->finish_request(id, {sample("aaa", 0), sample("aaa", 0)});
  REQUIRE_FALSE(status);
  CHECK(t.store->samples("job", {"aaa"}).value().empty());
  CHECK(t.store->request(id).value()->state == "queued");
}

TEST_CASE("storage::Store pinned requests go only to their machine", "[storage]") {
  TempStore t;
  auto r = request("aaa");
  r.pin_machine = "m1";
  t.store->enqueue(r).value();
  CHECK_FALSE(t.store->claim_request("local", "m0").value());
  CHECK(t.store->claim_request("local", "m1").value());
}

TEST_CASE("storage::Store finishing a bisection queues exactly one mail", "[storage]") {
  TempStore t;
  BisectionRow b;
  b.tree = "demo";
  b.branch = "master";
  b.job = "job";
  b.metric = "x";
  b.good = b.range_good = "aaa";
  b.bad = b.range_bad = "bbb";
  b.id = t.store->add_bisection(b).value();
  b.state = "found";
  b.culprit = "ccc";
  ReportRow report;
  report.subject = "s";
  report.sender = "bisectd <b@localhost>";
  report.to_json = "[]";
  report.cc_json = "[]";
  report.message_id = "<1@localhost>";
  report.text = "mail";
  REQUIRE(t.store->finish_bisection(b, report));
  CHECK(t.store->bisection(b.id).value()->state == "found");
  auto due = t.store->due_mail(std::numeric_limits<std::int64_t>::max()).value();
  REQUIRE(due.size() == 1);
  REQUIRE(t.store->mark_mail_sent(due[0].first.id));
  CHECK(t.store->due_mail(std::numeric_limits<std::int64_t>::max()).value().empty());
  CHECK(t.store->report(b.id).value()->sent);
  // A second report for the same bisection is refused, and the bisection row is not changed half-way.
  b.state = "failed";
  report.message_id = "<2@localhost>";
  REQUIRE_FALSE(t.store->finish_bisection(b, report));
  CHECK(t.store->bisection(b.id).value()->state == "found");
}

TEST_CASE("storage::migrate refuses a database from a newer bisectd", "[storage]") {
  TempStore t;
  REQUIRE(t.store->connection().exec("PRAGMA user_version = 99"));
  auto status = migrate(t.store->connection());
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("newer") != std::string::npos);
}

TEST_CASE("storage::Store detections: state changes keep or replace the measured change", "[storage]") {
  TempStore t;
  DetectionRow d{0, "demo", "master", "job", "good1", "bad1", "x", "confirming", -0.20, 0.01, 0, 0};
  auto id = t.store->add_detection(d);
  REQUIRE(id.has_value());
  REQUIRE(t.store->set_detection_state(*id, "confirming", 0).has_value());
  CHECK(t.store->detection("demo", "job", "good1", "bad1").value()->change == Approx(-0.20));
  REQUIRE(t.store->set_detection_state(*id, "confirmed", 7, -0.58).has_value());
  auto stored = t.store->detection("demo", "job", "good1", "bad1").value();
  REQUIRE(stored.has_value());
  CHECK(stored->state == "confirmed");
  CHECK(stored->bisection_id == 7);
  CHECK(stored->change == Approx(-0.58)); // the interleaved confirmation's estimate
  CHECK_FALSE(t.store->detection("demo", "job", "good1", "other").value().has_value());
}
