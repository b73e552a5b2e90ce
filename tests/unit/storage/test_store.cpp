#include "base/fs.hpp"
#include "storage/schema.hpp"
#include "storage/sqlite.hpp"
#include "storage/store.hpp"
#include "support/temp_dir.hpp"

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
  r.purpose = Purpose::bisect;
  r.machine_group = group;
  r.runs = 3;
  return r;
}

// A running bisection of tree demo, stored.
BisectionRow add_running_bisection(TempStore& t) {
  BisectionRow b;
  b.tree = "demo";
  b.branch = "master";
  b.job = "job";
  b.metric = "x";
  b.good = b.range_good = "aaa";
  b.bad = b.range_bad = "bbb";
  b.id = t.store->add_bisection(b).value();
  return b;
}

SampleRow sample(const std::string& commit, int run) {
  SampleRow s;
  s.tree = "demo";
  s.job = "job";
  s.commit = commit;
  s.machine = "m0";
  s.boot_id = "boot-1";
  s.run = run;
  s.metrics = {{"x", 1.5}};
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
  CHECK(claimed->state == RequestState::building);
  CHECK(claimed->attempts == 1);

  REQUIRE(t.store->finish_request(first, {sample("aaa", 0), sample("aaa", 1)}));
  CHECK(t.store->request(first).value()->state == RequestState::done);
  CHECK(t.store->samples("job", {"aaa"}).value().size() == 2);

  // A claimed request whose daemon died goes back to the queue; nothing of it was stored.
  auto interrupted = t.store->claim_request("local", "m0").value();
  REQUIRE(interrupted->id == second);
  CHECK(t.store->requeue_interrupted(5).value().first == 1);
  CHECK(t.store->request(second).value()->state == RequestState::queued);
  CHECK(t.store->samples("job", {"bbb"}).value().empty());
}

TEST_CASE("storage::Store finish_request is all or nothing", "[storage]") {
  TempStore t;
  auto id = t.store->enqueue(request("aaa")).value();
  // The same (request, boot, run) twice violates the unique key: nothing may be stored.
  auto status = t.store->finish_request(id, {sample("aaa", 0), sample("aaa", 0)});
  REQUIRE_FALSE(status);
  CHECK(t.store->samples("job", {"aaa"}).value().empty());
  CHECK(t.store->request(id).value()->state == RequestState::queued);
}

TEST_CASE("storage::Store pinned requests go only to their machine", "[storage]") {
  TempStore t;
  auto r = request("aaa");
  r.pin_machine = "m1";
  t.store->enqueue(r).value();
  CHECK_FALSE(t.store->claim_request("local", "m0").value());
  CHECK(t.store->claim_request("local", "m1").value());
}

namespace {

// A minimal report of a bisection that found "ccc", with the mailed text `text`.
ReportRow found_report(BisectionRow& b, const std::string& text) {
  b.state = BisectionState::found;
  b.culprit = "ccc";
  ReportRow report;
  report.subject = "s";
  report.sender = "bisectd <b@localhost>";
  report.message_id = "<1@localhost>";
  report.text = text;
  return report;
}

} // namespace

TEST_CASE("storage::Store finishing a bisection queues exactly one mail", "[storage]") {
  TempStore t;
  BisectionRow b = add_running_bisection(t);
  ReportRow report = found_report(b, "mail");
  REQUIRE(t.store->finish_bisection(b, report));
  CHECK(t.store->bisection(b.id).value()->state == BisectionState::found);
  auto due = t.store->due_mail(std::numeric_limits<std::int64_t>::max()).value();
  REQUIRE(due.size() == 1);
  REQUIRE(t.store->mark_mail_sent(due[0].first.id));
  CHECK(t.store->due_mail(std::numeric_limits<std::int64_t>::max()).value().empty());
  CHECK(t.store->report(b.id).value()->sent);
  // A second report for the same bisection is refused, and the bisection row is not changed half-way.
  b.state = BisectionState::failed;
  report.message_id = "<2@localhost>";
  REQUIRE_FALSE(t.store->finish_bisection(b, report));
  CHECK(t.store->bisection(b.id).value()->state == BisectionState::found);
}

TEST_CASE("storage::Store a bisection cancelled while its step was computed stays cancelled, unmailed", "[storage]") {
  TempStore t;
  BisectionRow read_before = add_running_bisection(t); // what the driver read before the operator's cancel
  REQUIRE(t.store->cancel_bisection(read_before.id));
  read_before.runs = 7;
  auto updated = t.store->update_bisection(read_before);
  REQUIRE_FALSE(updated);
  CHECK(updated.error().code == ErrorCode::conflict);
  read_before.state = BisectionState::found;
  read_before.culprit = "ccc";
  REQUIRE_FALSE(t.store->finish_bisection(read_before, found_report(read_before, "mail")));
  auto stored = t.store->bisection(read_before.id).value();
  CHECK(stored->state == BisectionState::cancelled);
  CHECK(stored->runs == 0);
  CHECK(t.store->due_mail(std::numeric_limits<std::int64_t>::max()).value().empty());
}

TEST_CASE("storage::Store keeps a report's full-table text beside the mailed one", "[storage]") {
  TempStore t;
  BisectionRow b = add_running_bisection(t);
  ReportRow report = found_report(b, "mail with 30 rows");
  report.text_all = "mail with 42 rows";
  REQUIRE(t.store->finish_bisection(b, report));
  auto stored = t.store->report(b.id).value();
  REQUIRE(stored);
  CHECK(stored->text == "mail with 30 rows");
  CHECK(stored->text_all == "mail with 42 rows");
  auto due = t.store->due_mail(std::numeric_limits<std::int64_t>::max()).value();
  REQUIRE(due.size() == 1);
  CHECK(due[0].second.text == "mail with 30 rows"); // the mail is the capped one
}

TEST_CASE("storage::Store a report that repeats an earlier culprit is stored, not mailed", "[storage]") {
  TempStore t;
  auto finish = [&](const std::string& job, const std::string& culprit, std::int64_t repeat_of) {
    BisectionRow b = add_running_bisection(t);
    b.job = job;
    REQUIRE(t.store->update_bisection(b));
    b.state = BisectionState::found;
    b.culprit = culprit;
    ReportRow report;
    report.subject = "s";
    report.sender = "bisectd <b@localhost>";
    report.message_id = "<" + std::to_string(b.id) + "@localhost>";
    report.text = "mail";
    report.repeat_of = repeat_of;
    REQUIRE(t.store->finish_bisection(b, report));
    return b.id;
  };
  auto first = finish("job", "ccc", 0);
  CHECK_FALSE(t.store->first_report("demo", "job", "ccc", first).value()); // itself does not count
  auto earlier = t.store->first_report("demo", "job", "ccc", 999).value();
  REQUIRE(earlier);
  CHECK(earlier->bisection_id == first);
  CHECK(earlier->message_id == "<" + std::to_string(first) + "@localhost>");
  CHECK_FALSE(t.store->first_report("demo", "other-job", "ccc", 999).value()); // per tree and job
  CHECK_FALSE(t.store->first_report("demo", "job", "ddd", 999).value());
  CHECK_FALSE(t.store->first_report("other-tree", "job", "ccc", 999).value());

  auto second = finish("job", "ccc", earlier->id);
  auto repeat = t.store->report(second).value();
  REQUIRE(repeat);
  CHECK(repeat->repeat_of == earlier->id);
  CHECK_FALSE(repeat->sent);
  auto due = t.store->due_mail(std::numeric_limits<std::int64_t>::max()).value();
  REQUIRE(due.size() == 1); // the repeat is not queued
  CHECK(due[0].second.bisection_id == first);
  CHECK(due[0].second.repeat_of == 0);
  // A third bisection still answers the first report, not the repeat.
  CHECK(t.store->first_report("demo", "job", "ccc", 999).value()->bisection_id == first);
}

TEST_CASE("storage::Store fail_bisection ends a running bisection and fails its queued requests", "[storage]") {
  TempStore t;
  BisectionRow b = add_running_bisection(t);
  auto r = request("ccc");
  r.bisection_id = b.id;
  auto queued = t.store->enqueue(r).value();
  auto other = t.store->enqueue(request("ddd")).value(); // no bisection: untouched
  auto waiting = t.store->queued_requests().value();
  REQUIRE(waiting.size() == 2);
  CHECK(waiting[0].id == queued);
  REQUIRE(t.store->fail_bisection(b.id, "request 1 could not be placed"));
  auto ended = t.store->bisection(b.id).value();
  CHECK(ended->state == BisectionState::failed);
  CHECK(ended->error == "request 1 could not be placed");
  CHECK(t.store->request(queued).value()->state == RequestState::failed);
  CHECK(t.store->request(other).value()->state == RequestState::queued);
  CHECK(t.store->queued_requests().value().size() == 1);
  CHECK_FALSE(t.store->fail_bisection(b.id, "again")); // not running any more
  CHECK(t.store->bisection(b.id).value()->error == "request 1 could not be placed");
}

TEST_CASE("storage::migrate refuses a database from a newer bisectd", "[storage]") {
  TempStore t;
  auto connection = Connection::open(t.dir / "bisectd.db").value();
  REQUIRE(connection->exec("PRAGMA user_version = 99"));
  auto status = migrate(*connection);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("newer") != std::string::npos);
}

TEST_CASE("storage::Store detections: state changes keep or replace the measured change", "[storage]") {
  TempStore t;
  DetectionRow d{0,     "demo", "master", "job", "good1", "bad1", "x", DetectionState::confirming,
                 -0.20, 0.01,   0,        0,     false,   "",     "",  0};
  auto id = t.store->add_detection(d);
  REQUIRE(id.has_value());
  REQUIRE(t.store->set_detection_state(*id, DetectionState::confirming, 0).has_value());
  CHECK(t.store->detection("demo", "job", "good1", "bad1").value()->change == Approx(-0.20));
  REQUIRE(t.store->set_detection_state(*id, DetectionState::confirmed, 7, -0.58).has_value());
  auto stored = t.store->detection("demo", "job", "good1", "bad1").value();
  REQUIRE(stored.has_value());
  CHECK(stored->state == DetectionState::confirmed);
  CHECK(stored->bisection_id == 7);
  CHECK(stored->change == Approx(-0.58)); // the interleaved confirmation's estimate
  CHECK_FALSE(t.store->detection("demo", "job", "good1", "other").value().has_value());
}

TEST_CASE("storage::Store keeps a sample's metrics and answers one metric at a time", "[storage]") {
  TempStore t;
  auto id = t.store->enqueue(request("aaa")).value();
  auto s0 = sample("aaa", 0);
  s0.metrics = {{"ops", 101.5}, {"proc-vmstat.pgfault", 12345}};
  auto s1 = sample("aaa", 1);
  s1.metrics = {{"ops", 99.5}};
  s1.verification = true;
  REQUIRE(t.store->finish_request(id, {s0, s1}));
  auto all = t.store->samples("job", {"aaa"}).value();
  REQUIRE(all.size() == 2);
  CHECK(all[0].metrics == s0.metrics);
  CHECK(all[1].metrics == s1.metrics);
  auto ops = t.store->metric_samples("job", {"aaa"}, "ops").value();
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].value == 101.5);
  CHECK(ops[0].boot_id == "boot-1");
  CHECK(ops[1].verification);
  CHECK(t.store->metric_samples("job", {"aaa"}, "proc-vmstat.pgfault").value().size() == 1);
  CHECK(t.store->metric_samples("job", {"aaa"}, "missing").value().empty());
  CHECK(t.store->request_metric_samples({id}, "ops").value().size() == 2);
}

TEST_CASE("storage::Store flags count per kind and decide the skip rule", "[storage]") {
  TempStore t;
  FlagKey aaa{"job", "def1", "aaa", ""}, bbb{"job", "def1", "bbb", ""};
  CHECK_FALSE(t.store->flags(aaa).value().is_skipped());
  CHECK(t.store->add_flag(aaa, CommitFlag::unbootable, "panic").value() == 1);
  CHECK_FALSE(t.store->flags(aaa).value().is_skipped()); // one boot failure may be the machine's
  CHECK(t.store->add_flag(aaa, CommitFlag::unbootable, "panic").value() == 2);
  CHECK(t.store->flags(aaa).value().is_skipped());
  CHECK(t.store->add_flag(bbb, CommitFlag::unbuildable, "make").value() == 1);
  CHECK(t.store->add_flag(bbb, CommitFlag::unbuildable, "make").value() == 2);
  CHECK(t.store->flags(bbb).value().is_skipped());
  CHECK_FALSE(t.store->flags({"job", "def1", "bbb", "layout"}).value().is_skipped()); // per variant
}

TEST_CASE("storage::Store keeps a bisection's working state in columns and marks", "[storage]") {
  TempStore t;
  BisectionRow b;
  b.tree = "demo";
  b.job = "job";
  b.metric = "x";
  b.good = b.range_good = "aaa";
  b.bad = b.range_bad = "bbb";
  b.id = t.store->add_bisection(b).value();
  REQUIRE(t.store->exclude_commit(b.id, "ccc"));
  REQUIRE(t.store->exclude_commit(b.id, "ccc")); // a set: twice is once
  REQUIRE(t.store->add_prebuilt(b.id, "ddd"));
  b.merge = "eee";
  b.verification_json = R"({"confirm": "holds"})";
  REQUIRE(t.store->update_bisection(b));
  auto stored = t.store->bisection(b.id).value();
  REQUIRE(stored);
  CHECK(stored->excluded == std::set<std::string>{"ccc"});
  CHECK(stored->prebuilt == std::set<std::string>{"ddd"});
  CHECK(stored->merge == "eee");
  CHECK(stored->verification_json == R"({"confirm": "holds"})");
  CHECK(t.store->bisections("demo", BisectionState::running).value().size() == 1);
  CHECK(t.store->bisections("", BisectionState::found).value().empty());
}

TEST_CASE("storage::Store keeps lists of strings with any characters", "[storage]") {
  TempStore t;
  TreeRow tree;
  tree.name = "demo";
  tree.url = "/tmp/demo";
  tree.job = "job";
  tree.branches = {"master", "for-next"};
  tree.notify = {"\"Doe, Jane\" <j@x.org>", "back\\slash\ttab", "Grüße <g@x.org>"};
  REQUIRE(t.store->add_tree(tree, JobRow{"job", "/x/job.yaml", "name: job", 0}));
  auto stored = t.store->tree("demo").value();
  REQUIRE(stored);
  CHECK(stored->branches == tree.branches);
  CHECK(stored->notify == tree.notify);
  CHECK(stored->mail_cc.empty());
}

TEST_CASE("storage::migrate moves schema 1's JSON state into columns, rows and marks", "[storage]") {
  test::TempDir tmp;
  auto file = tmp.path() / "old.db";
  {
    auto connection = Connection::open(file).value();
    REQUIRE(migrate(*connection, 1));
    REQUIRE(connection->exec(R"sql(
      INSERT INTO requests (id, tree, job, commit_sha, purpose, machine_group, runs, state, created_at, updated_at)
        VALUES (1, 'demo', 'job', 'aaa', 'bisect', 'local', 2, 'done', 0, 0);
      INSERT INTO samples (request_id, tree, job, commit_sha, machine, boot_id, run, metrics, created_at)
        VALUES (1, 'demo', 'job', 'aaa', 'm0', 'b1', 0, '{"ops": 10.5, "name": "text is not a metric"}', 0),
               (1, 'demo', 'job', 'aaa', 'm0', 'b1', 1, 'not json', 0);
      INSERT INTO bisections (id, tree, branch, job, metric, good, bad, range_good, range_bad, state, result,
                              origin, created_at)
        VALUES (1, 'demo', 'master', 'job', 'ops', 'aaa', 'bbb', 'aaa', 'bbb', 'running',
                '{"verdict": "need_runs", "merge": "mmm", "excluded": ["x1", "x2"], "prebuilt": ["p1"],
                  "verification": {"confirm": "line"}}', 'manual', 0);
    )sql"));
  }
  auto store = Store::open(file).value();
  auto samples = store->samples("job", {"aaa"}).value();
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].metrics == std::map<std::string, double>{{"ops", 10.5}});
  CHECK(samples[1].metrics.empty());
  auto b = store->bisection(1).value();
  REQUIRE(b);
  CHECK(b->merge == "mmm");
  CHECK(b->excluded == std::set<std::string>{"x1", "x2"});
  CHECK(b->prebuilt == std::set<std::string>{"p1"});
  CHECK(b->verification_json == R"({"confirm":"line"})");
  CHECK(b->result_json == R"({"verdict":"need_runs"})");
}

TEST_CASE("storage states round-trip through their stored names", "[storage]") {
  for (auto s : {RequestState::queued, RequestState::building, RequestState::running, RequestState::done,
                 RequestState::failed}) {
    CHECK(parse_request_state(to_string(s)) == s);
  }
  CHECK(is_open(RequestState::running));
  CHECK_FALSE(is_open(RequestState::done));
  CHECK(is_waiting(RequestState::building));
  CHECK_FALSE(is_waiting(RequestState::running));
  for (auto p : {Purpose::watch, Purpose::confirm, Purpose::bisect, Purpose::verify}) {
    CHECK(parse_purpose(to_string(p)) == p);
  }
  CHECK(to_string(BisectionState::not_found) == "not_found");
  CHECK(parse_bisection_state("found") == BisectionState::found);
  CHECK(parse_detection_state("rejected") == DetectionState::rejected);
  CHECK(parse_origin("detect") == Origin::detect);
  CHECK(parse_outbox_state("sending") == OutboxState::sending);
  CHECK_FALSE(parse_request_state("finished"));
  CHECK_FALSE(parse_commit_flag(""));
}

TEST_CASE("storage::Store claims fresh work first, waits out a retry time, skips removed trees", "[storage]") {
  TempStore t;
  TreeRow tree;
  tree.name = "demo";
  tree.url = "/tmp/demo";
  tree.job = "job";
  REQUIRE(t.store->add_tree(tree, JobRow{"job", "/x/job.yaml", "name: job", 0}));
  auto old_id = t.store->enqueue(request("aaa")).value();
  REQUIRE(t.store->claim_request("local", "m0").value()->id == old_id);
  REQUIRE(t.store->fail_request(old_id, "infra", "lab down", std::numeric_limits<std::int64_t>::max()));
  CHECK_FALSE(t.store->claim_request("local", "m0").value()); // backing off
  REQUIRE(t.store->fail_request(old_id, "infra", "lab down", 0));
  auto new_id = t.store->enqueue(request("bbb")).value();
  CHECK(t.store->claim_request("local", "m0").value()->id == new_id); // fewer attempts first
  CHECK(t.store->claim_request("local", "m0").value()->id == old_id);
  CHECK(t.store->request(old_id).value()->attempts == 2);
  // Interrupted twice more: a request that keeps killing the daemon fails instead of looping.
  CHECK(t.store->requeue_interrupted(5).value() == std::pair{2, 0});
  REQUIRE(t.store->claim_request("local", "m0").value());
  REQUIRE(t.store->claim_request("local", "m0").value());
  CHECK(t.store->requeue_interrupted(3).value() == std::pair{1, 1}); // bbb (2 claims) again, aaa (3) fails
  CHECK(t.store->request(old_id).value()->state == RequestState::failed);
  CHECK(t.store->failed_requests_for("job", "aaa", Purpose::bisect).value() == 1);
  t.store->enqueue(request("ccc")).value();
  REQUIRE(t.store->remove_tree("demo"));
  CHECK_FALSE(t.store->claim_request("local", "m0").value()); // nothing of a removed tree runs
}

TEST_CASE("storage::Store counts what a bisection's own requests caused", "[storage]") {
  TempStore t;
  auto b = add_running_bisection(t);
  auto own = [&](const std::string& commit, const std::string& variant) {
    auto r = request(commit);
    r.bisection_id = b.id;
    r.variant = variant;
    return t.store->enqueue(r).value();
  };
  // Two visits of aaa (boots 1 and 2, 3 runs each), a layout variant of aaa (boot 3), a build failure at ccc, a
  // queued request at ddd, and an alert's request at aaa (boot 9) that is not its own.
  auto first = own("aaa", ""), second = own("aaa", ""), layout = own("aaa", "layout");
  auto failed = own("ccc", ""), queued = own("ddd", "");
  auto alert = t.store->enqueue(request("aaa")).value();
  (void)queued;
  auto visit = [&](std::int64_t id, const std::string& boot, int runs) {
    std::vector<SampleRow> rows;
    for (int run = 0; run < runs; ++run) {
      auto s = sample("aaa", run);
      s.boot_id = boot;
      rows.push_back(s);
    }
    REQUIRE(t.store->finish_request(id, rows));
  };
  visit(first, "boot-1", 3);
  visit(second, "boot-2", 3);
  visit(layout, "boot-3", 2);
  visit(alert, "boot-9", 3);
  REQUIRE(t.store->fail_request(failed, "build_failed", "does not build", std::nullopt));
  // Machine time: every visit's wall time, a failed one's too (the second request had a failed visit of 20 s).
  for (auto [id, seconds] : {std::pair{first, 30.0}, {second, 20.0}, {second, 25.0}, {layout, 12.5}, {alert, 40.0}}) {
    REQUIRE(t.store->add_machine_time(id, seconds));
  }
  CHECK(t.store->request(second).value()->machine_seconds == Approx(45.0));
  auto cost = t.store->bisection_cost(b.id).value();
  CHECK(cost.machine_seconds == Approx(87.5)); // 30 + 20 + 25 + 12.5, not the alert's 40
  CHECK(cost.runs == 8);   // 3 + 3 + 2, not the alert's 3
  CHECK(cost.boots == 3);  // boot-1..3
  CHECK(cost.builds == 3); // aaa, aaa (layout), ccc (tried); not ddd (never built)
  b.runs = cost.runs;
  b.boots = cost.boots;
  b.runs_reused = 3;
  b.reused_earlier = 2;
  b.machine_seconds = cost.machine_seconds;
  REQUIRE(t.store->update_bisection(b));
  auto stored = t.store->bisection(b.id).value();
  REQUIRE(stored);
  CHECK(stored->runs == 8);
  CHECK(stored->boots == 3);
  CHECK(stored->runs_reused == 3);
  CHECK(stored->reused_earlier == 2);
  CHECK(stored->machine_seconds == Approx(87.5));
  CHECK(t.store->bisection_cost(b.id + 100).value().runs == 0);
}
