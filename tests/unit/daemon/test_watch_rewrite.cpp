// A rewritten (rebased, force-pushed) branch: the new head is measured and compared with the last measured head as
// two commits; a confirmed shift is bisected on the new history from the merge base (measured first) or from the
// newest measured ancestor, or said to have come with the commits the rewrite dropped. And every decision of the
// watcher is a detection row: baseline, below threshold, failed (with the request), rewritten history. A branch
// deleted upstream stops its watch until it is back. On an in-memory store and history.
#include "watch_world.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace bisectd;
using namespace bisectd::test;
using storage::DetectionState;
using storage::Purpose;

namespace {

// Fails every start, as the driver does for a good that is not an ancestor of bad.
class RefusingStarter final : public daemon::BisectionStarter {
public:
  Result<std::int64_t> start(const daemon::BisectionStart&) override {
    ++calls;
    return make_error(ErrorCode::invalid_input, "good 5a2a18d2d6 is not an ancestor of bad 011a336fac");
  }
  int calls = 0;
};

} // namespace

TEST_CASE("rewrite: a slowdown on the new history is bisected from the merge base, measured first",
          "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  w.push(c[3]);
  w.settle();
  // Rebased onto c1: c2 and c3 again under new ids, then a commit that is 20 % slower.
  auto r = w.repo.line("r", 3, c[1]);
  w.level[r[2]] = 80.0;
  w.push(r[2]);
  w.settle();

  REQUIRE(w.starter.started.size() == 1);
  CHECK(w.starter.started[0].good == c[1]); // the merge base, never measured before the rewrite
  CHECK(w.starter.started[0].bad == r[2]);
  CHECK(w.watched() == std::vector<std::string>{c[3], r[2], c[1]});
  auto d = w.store.detection("demo", "bench", c[3], r[2]).value();
  REQUIRE(d);
  CHECK(d->state == DetectionState::confirmed);
  CHECK(d->rewritten);
  CHECK(d->base == c[1]);
  CHECK(d->bisection_id == 1);
  CHECK(d->note.find("bisecting the new history") != std::string::npos);
  CHECK(w.tested() == r[2]);

  // The next push on the new history is compared with the rewritten head as usual.
  auto next = w.repo.line("n", 1, r[2]);
  w.level[next[0]] = 80.0;
  w.push(next[0]);
  w.settle();
  CHECK(w.tested() == next[0]);
  auto below = w.store.detection("demo", "bench", r[2], next[0]).value();
  REQUIRE(below);
  CHECK(below->state == DetectionState::below_threshold);
  CHECK_FALSE(below->rewritten);
  CHECK(w.starter.started.size() == 1);
}

TEST_CASE("rewrite: the detector's series keeps the heads the rewrite dropped, in the order they were measured",
          "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  auto old_heads = w.repo.line("o", 9, c[1]); // nine heads measured before the rewrite (the detector needs 8)
  for (const auto& head : old_heads) {
    w.push(head);
    w.settle();
  }
  auto r = w.repo.line("r", 9, c[1]); // rebased onto c1, 20 % slower from its first commit on
  for (const auto& head : r) {
    w.level[head] = 80.0;
    w.push(head);
    w.settle();
  }
  REQUIRE(w.starter.started.size() == 1); // the first new head's comparison; the series' step is that one
  CHECK(w.starter.started[0].good == c[1]);
  CHECK(w.starter.started[0].bad == r[0]);

  auto job = bench_job();
  std::set<std::string> heads(old_heads.begin(), old_heads.end());
  heads.insert(r.begin(), r.end());
  auto series = w.series.load_branch("demo", job, r.back(), heads).value();
  std::vector<std::string> expected{c[1]}; // the merge base, measured after the old heads: before them
  expected.insert(expected.end(), old_heads.begin(), old_heads.end());
  expected.insert(expected.end(), r.begin(), r.end());
  CHECK(series.commits == expected);
  CHECK(w.series.load("demo", job, r.back()).value().commits.size() == 1 + r.size()); // ancestors only

  // A range across the rewrite counts from the merge base: inside the bisected (c1, r0], or not.
  auto covered = [&](const std::string& good, const std::string& bad) {
    daemon::watch::Candidate candidate{"ops", good, bad, good, bad, {}};
    return daemon::watch::is_covered(w.trees, w.store, w.store, "demo", "master", job, candidate).value();
  };
  CHECK(covered(old_heads[5], r[3]));
  CHECK(covered(old_heads[8], r[0]));
  CHECK_FALSE(covered(r[4], r[8]));
}

TEST_CASE("rewrite: a newer measured ancestor of the new head is the base, without measuring the merge base",
          "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  w.push(c[1]);
  w.settle();
  w.push(c[3]);
  w.settle(); // below the threshold: c3 is measured and the new baseline
  w.push(c[5]);
  w.settle();
  auto r = w.repo.line("r", 2, c[3]); // rebased onto c3: c4 and c5 dropped, a slow commit added
  w.level[r[1]] = 80.0;
  w.push(r[1]);
  w.settle();
  REQUIRE(w.starter.started.size() == 1);
  CHECK(w.starter.started[0].good == c[3]);
  CHECK(w.starter.started[0].bad == r[1]);
  CHECK(w.watched() == std::vector<std::string>{c[1], c[3], c[5], r[1]}); // nothing measured twice
}

TEST_CASE("rewrite: a shift that came with dropped commits is said so, not bisected", "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  for (std::size_t i = 2; i < c.size(); ++i) {
    w.level[c[i]] = 80.0; // c2 made it slower
  }
  w.push(c[4]);
  w.settle();
  auto r = w.repo.line("r", 3, c[1]); // the rewrite drops c2 (and the rest): back to the old level
  w.push(r[2]);
  w.settle();

  CHECK(w.starter.started.empty());
  auto d = w.store.detection("demo", "bench", c[4], r[2]).value();
  REQUIRE(d);
  CHECK(d->state == DetectionState::dropped_by_rewrite);
  CHECK(d->base == c[1]);
  CHECK(d->note.find("came with commits dropped by the rewrite of master") != std::string::npos);
  CHECK(w.tested() == r[2]);
}

TEST_CASE("rewrite: a branch pushed back to an older commit is compared once, with no error loop",
          "[daemon][watch][rewrite]") {
  WatchWorld<RefusingStarter> w;
  const auto& c = w.shas;
  w.level[c[4]] = w.level[c[5]] = 80.0;
  w.push(c[5]);
  w.settle();
  w.push(c[2]); // `git push -f` to an older commit: the reproduction
  w.settle();
  for (int i = 0; i < 10; ++i) {
    w.watcher.advance();
  }
  CHECK(w.starter.calls == 0); // nothing left on the branch to bisect
  auto d = w.store.detection("demo", "bench", c[5], c[2]).value();
  REQUIRE(d);
  CHECK(d->rewritten);
  CHECK(d->state == DetectionState::dropped_by_rewrite);
  CHECK(w.tested() == c[2]);
  CHECK(w.store.detections_in_state(DetectionState::confirming).value().empty());
}

TEST_CASE("watch: a bisection that cannot be opened fails its detection once", "[daemon][watch][rewrite]") {
  WatchWorld<RefusingStarter> w;
  const auto& c = w.shas;
  w.push(c[0]);
  w.settle();
  w.level[c[5]] = 80.0;
  w.push(c[5]);
  w.settle();
  for (int i = 0; i < 10; ++i) {
    w.watcher.advance();
  }
  CHECK(w.starter.calls == 1);
  auto d = w.store.detection("demo", "bench", c[0], c[5]).value();
  REQUIRE(d);
  CHECK(d->state == DetectionState::failed);
  CHECK(d->note.find("is not an ancestor") != std::string::npos);
  CHECK(w.tested() == c[5]); // the next head is compared with this one
}

TEST_CASE("watch: every measured head is a detection row: baseline, below threshold, failed with its request",
          "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  w.push(c[0]);
  w.settle();
  w.level[c[2]] = 98.0;
  w.push(c[2]);
  w.settle();
  w.push(c[4]);
  std::int64_t last_request = 0;
  for (int attempt = 0; attempt < 3; ++attempt) { // every watch request of c4 fails
    w.watcher.advance();
    while (auto claimed = w.store.claim_request("local", "m0").value()) {
      last_request = claimed->id;
      REQUIRE(w.store.fail_request(claimed->id, "infra", "machine m0: ssh: connection refused", std::nullopt));
    }
  }
  w.watcher.advance();

  auto rows = w.store.detections("demo").value(); // newest first
  REQUIRE(rows.size() == 3);
  CHECK(rows[2].state == DetectionState::baseline);
  CHECK(rows[2].good.empty());
  CHECK(rows[2].bad == c[0]);
  CHECK(rows[1].state == DetectionState::below_threshold);
  CHECK(rows[1].change == Approx(-0.02).margin(0.015));
  CHECK(rows[0].state == DetectionState::failed);
  CHECK(rows[0].bad == c[4]);
  CHECK(rows[0].request_id == last_request);
  CHECK(rows[0].note.find("connection refused") != std::string::npos);
  CHECK(w.watched().size() == 4); // c0, c2 and two bounded attempts at c4
  CHECK(w.tested() == c[2]);
}

TEST_CASE("watch: a branch deleted upstream stops its watch, the tree stays; it resumes when the branch is back",
          "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  w.push(c[0]);
  w.settle();
  auto tree = *w.store.tree("demo").value();
  w.watcher.on_heads(tree, {{"other", c[1]}});
  auto head = w.store.head("demo", "master").value().value();
  CHECK(head.error.find("deleted upstream") != std::string::npos);
  CHECK(head.error_at > 0);
  REQUIRE(w.store.set_head_seen("demo", "master", c[3])); // a stale head must not be measured meanwhile
  w.settle();
  CHECK(w.watched().size() == 1);
  CHECK(w.store.tree("demo").value().has_value());

  w.watcher.on_heads(tree, {{"master", c[3]}});
  CHECK(w.store.head("demo", "master").value()->error.empty());
  w.settle();
  CHECK(w.tested() == c[3]);
}

TEST_CASE("watch: a tree removed and added again under its name starts with no baseline", "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  w.push(c[5]);
  w.settle();
  REQUIRE(w.store.remove_tree("demo"));
  storage::TreeRow tree;
  tree.name = "demo";
  tree.branches = {"master"};
  tree.job = "bench";
  REQUIRE(w.store.add_tree(tree, storage::JobRow{"bench", "bench.yaml", "name: bench", 0}));
  CHECK_FALSE(w.store.head("demo", "master").value().has_value());
  CHECK(w.store.detections("demo").value().empty());
}

TEST_CASE("rewrite: a confirming detection an older bisectd stored (no rewrite flag) is decided on the new history",
          "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  w.push(c[3]);
  w.settle();
  auto r = w.repo.line("r", 2, c[1]);
  w.level[r[1]] = 80.0;
  w.push(r[1]);
  w.watcher.advance(); // queues the watch request of the new head
  w.sim.run_queued("local");
  w.watcher.advance(); // compares: the shift goes to confirmation
  auto confirming = w.store.detections_in_state(DetectionState::confirming).value();
  REQUIRE(confirming.size() == 1);
  auto stored = confirming[0];
  REQUIRE(stored.rewritten);
  stored.rewritten = false; // what migration 11 gives a row stored before it
  REQUIRE(w.store.update_detection(stored));
  w.settle();
  REQUIRE(w.starter.started.size() == 1);
  CHECK(w.starter.started[0].good == c[1]);
  CHECK(w.store.detection("demo", "bench", c[3], r[1]).value()->rewritten);
}

TEST_CASE("watch: a decision stored just before a crash does not hold the branch back", "[daemon][watch][rewrite]") {
  WatchWorld<> w;
  const auto& c = w.shas;
  storage::DetectionRow baseline; // the baseline row stored, the head's `tested` not yet
  baseline.tree = "demo";
  baseline.branch = "master";
  baseline.job = "bench";
  baseline.bad = c[0];
  baseline.state = DetectionState::baseline;
  REQUIRE(w.store.add_detection(baseline));
  w.push(c[0]);
  w.settle();
  CHECK(w.tested() == c[0]);

  auto below = baseline; // the same for a head below the threshold
  below.good = c[0];
  below.bad = c[2];
  below.state = DetectionState::below_threshold;
  REQUIRE(w.store.add_detection(below));
  w.push(c[2]);
  w.settle();
  CHECK(w.tested() == c[2]);
  CHECK(w.store.detections("demo").value().size() == 2);
}
