// The watcher's decisions in SQLite: a detection row with its rewrite, base, note and request; a branch's own watch
// error; when a tree was polled; a tree added again under a removed tree's name starts with no baseline and no
// decisions of the old one; the newest failed request of a commit.
#include "base/fs.hpp"
#include "storage/store.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::storage;

namespace {

TreeRow demo_tree() {
  TreeRow tree;
  tree.name = "demo";
  tree.url = "/src/demo";
  tree.branches = {"master"};
  tree.job = "job";
  return tree;
}

} // namespace

TEST_CASE("storage::Store keeps every watcher decision with its rewrite, base, note and request", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-store-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    DetectionRow d;
    d.tree = "demo";
    d.branch = "master";
    d.job = "job";
    d.good = "old";
    d.bad = "new";
    d.metric = "ops";
    d.state = DetectionState::confirming;
    d.change = -0.1;
    d.rewritten = true;
    auto id = store->add_detection(d).value();
    d.id = id;
    d.state = DetectionState::measuring_base;
    d.base = "base";
    d.note = "rewritten history: searching the new history from base";
    REQUIRE(store->update_detection(d));
    auto stored = store->detection("demo", "job", "old", "new").value().value();
    CHECK(stored.rewritten);
    CHECK(stored.state == DetectionState::measuring_base);
    CHECK(stored.base == "base");
    CHECK(stored.note == d.note);
    CHECK(store->detections_in_state(DetectionState::measuring_base).value().size() == 1);

    DetectionRow failed;
    failed.tree = "demo";
    failed.branch = "master";
    failed.job = "job";
    failed.bad = "head";
    failed.state = DetectionState::failed;
    failed.note = "request 7: boom";
    failed.request_id = 7;
    REQUIRE(store->add_detection(failed));
    auto rows = store->detections("demo").value();
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].state == DetectionState::failed);
    CHECK(rows[0].request_id == 7);
    CHECK(rows[0].good.empty());
    for (auto state : {DetectionState::baseline, DetectionState::below_threshold, DetectionState::measuring_base,
                       DetectionState::dropped_by_rewrite, DetectionState::failed}) {
      CHECK(parse_detection_state(to_string(state)) == state);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("storage::Store: a branch's watch error, the poll time, and a tree added again starts clean", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-store-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    REQUIRE(store->add_tree(demo_tree(), JobRow{"job", "/x/job.yaml", "name: job", 0}));
    REQUIRE(store->set_head_seen("demo", "master", "aaa"));
    REQUIRE(store->set_head_tested("demo", "master", "aaa"));
    REQUIRE(store->set_head_error("demo", "master", "deleted upstream"));
    auto head = store->head("demo", "master").value().value();
    CHECK(head.error == "deleted upstream");
    auto since = head.error_at;
    CHECK(since > 0);
    REQUIRE(store->set_head_error("demo", "master", "deleted upstream again"));
    CHECK(store->head("demo", "master").value()->error_at == since); // the first error of the row is kept
    REQUIRE(store->set_head_error("demo", "master", ""));
    CHECK(store->head("demo", "master").value()->error_at == 0);
    CHECK(store->head("demo", "master").value()->tested == "aaa");

    REQUIRE(store->set_polled("demo", 1234));
    CHECK(store->tree("demo").value()->polled_at == 1234);

    DetectionRow d;
    d.tree = "demo";
    d.branch = "master";
    d.job = "job";
    d.bad = "aaa";
    d.state = DetectionState::baseline;
    REQUIRE(store->add_detection(d));
    REQUIRE(store->remove_tree("demo"));
    REQUIRE(store->add_tree(demo_tree(), JobRow{"job", "/x/job.yaml", "name: job", 0}));
    CHECK_FALSE(store->head("demo", "master").value().has_value());
    CHECK(store->detections("demo").value().empty());
    REQUIRE(store->add_detection(d)); // the same first head is a baseline again
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("storage::Store finds the newest failed request of a commit", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-store-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    REQUIRE(store->add_tree(demo_tree(), JobRow{"job", "/x/job.yaml", "name: job", 0}));
    CHECK_FALSE(store->last_failed_request("job", "abc", Purpose::watch).value().has_value());
    std::int64_t last = 0;
    for (const char* message : {"first", "second"}) {
      RequestRow r;
      r.tree = "demo";
      r.job = "job";
      r.commit = "abc";
      r.purpose = Purpose::watch;
      r.machine_group = "local";
      last = store->enqueue(r).value();
      REQUIRE(store->claim_request("local", "m0").value());
      REQUIRE(store->fail_request(last, "infra", message, std::nullopt));
    }
    auto failed = store->last_failed_request("job", "abc", Purpose::watch).value().value();
    CHECK(failed.id == last);
    CHECK(failed.error == "second");
    CHECK_FALSE(store->last_failed_request("job", "abc", Purpose::bisect).value().has_value());
  }
  std::filesystem::remove_all(dir);
}
