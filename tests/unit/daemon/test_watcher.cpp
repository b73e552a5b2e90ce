// The watcher's and the confirmation's decisions, on an in-memory store and history (no SQLite, no git).
#include "watch_world.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bisectd;
using namespace bisectd::test;
using storage::DetectionState;
using storage::Purpose;
using storage::RequestState;

TEST_CASE("watch: a new head is measured by a watch request and becomes the baseline", "[daemon][watch]") {
  WatchWorld<> w(2);
  w.push(w.shas[0]);
  w.watcher.advance();
  auto watch = w.requests(Purpose::watch);
  REQUIRE(watch.size() == 1);
  CHECK(watch[0].commit == w.shas[0]);
  CHECK(watch[0].runs == 3);
  CHECK(w.store.head("demo", "master").value()->tested.empty()); // not measured yet
  w.settle();
  CHECK(w.store.head("demo", "master").value()->tested == w.shas[0]);
  CHECK(w.requests(Purpose::watch).size() == 1); // measured once
  CHECK(w.starter.started.empty());
}

TEST_CASE("watch: a head within the threshold becomes the new baseline without a detection", "[daemon][watch]") {
  WatchWorld<> w(2);
  w.push(w.shas[0]);
  w.settle();
  w.level[w.shas[5]] = 98.0; // -2 %: below the job's 5 % threshold
  w.push(w.shas[5]);
  w.settle();
  CHECK(w.store.head("demo", "master").value()->tested == w.shas[5]);
  CHECK(w.store.detections_in_state(DetectionState::confirming).value().empty());
  CHECK(w.requests(Purpose::confirm).empty());
  CHECK(w.starter.started.empty());
}

TEST_CASE("watch: a confirmed slowdown opens one bisection of the two heads", "[daemon][watch]") {
  WatchWorld<> w(2);
  w.push(w.shas[0]);
  w.settle();
  w.level[w.shas[5]] = 80.0;
  w.push(w.shas[5]);
  w.watcher.advance(); // queues the watch request of the new head
  w.sim.run_queued("local");
  w.watcher.advance(); // compares: -20 % goes to confirmation
  auto confirming = w.store.detections_in_state(DetectionState::confirming).value();
  REQUIRE(confirming.size() == 1);
  CHECK(confirming[0].good == w.shas[0]);
  CHECK(confirming[0].bad == w.shas[5]);
  auto confirm = w.requests(Purpose::confirm);
  REQUIRE(confirm.size() >= 4);
  for (std::size_t i = 0; i < confirm.size(); ++i) {
    CHECK(confirm[i].pin_machine == "m0");                            // one machine: drift hits both sides
    CHECK(confirm[i].commit == (i % 2 == 0 ? w.shas[0] : w.shas[5])); // interleaved
  }
  CHECK(w.store.head("demo", "master").value()->tested == w.shas[0]); // held back while confirming
  w.settle();
  REQUIRE(w.starter.started.size() == 1);
  const auto& start = w.starter.started[0];
  CHECK(start.good == w.shas[0]);
  CHECK(start.bad == w.shas[5]);
  CHECK(start.metric == "ops");
  CHECK(start.origin == storage::Origin::detect);
  auto confirmed = w.store.detection("demo", "bench", w.shas[0], w.shas[5]).value();
  REQUIRE(confirmed);
  CHECK(confirmed->state == DetectionState::confirmed);
  CHECK(confirmed->change == Approx(-0.2).margin(0.02)); // the interleaved runs' estimate
  CHECK(w.store.head("demo", "master").value()->tested == w.shas[5]);
  w.settle();
  CHECK(w.starter.started.size() == 1); // decided once
}

TEST_CASE("watch: a jump the reruns do not reproduce is rejected", "[daemon][watch]") {
  WatchWorld<> w(2);
  w.push(w.shas[0]);
  w.settle();
  w.level[w.shas[5]] = 80.0;
  w.push(w.shas[5]);
  w.watcher.advance();
  w.sim.run_queued("local");
  w.level[w.shas[5]] = 100.0; // the first measurement was a fluke of the lab
  w.settle();
  CHECK(w.starter.started.empty());
  auto d = w.store.detection("demo", "bench", w.shas[0], w.shas[5]).value();
  REQUIRE(d);
  CHECK(d->state == DetectionState::rejected);
  CHECK(std::abs(d->change) < 0.05);                                  // what the reruns measured, not the fluke
  CHECK(d->note.rfind("the head's first runs said -", 0) == 0);       // the fluke, for the record
  CHECK(w.store.head("demo", "master").value()->tested == w.shas[5]); // decided: the new baseline
}

TEST_CASE("watch: a head that cannot be built is not compared; the next head is", "[daemon][watch]") {
  WatchWorld<> w(2);
  w.push(w.shas[0]);
  w.settle();
  auto key = daemon::flag_key(*w.jobs.get("bench").value(), w.shas[4]);
  for (int failure = 0; failure < storage::CommitFlags::k_failures_to_skip; ++failure) {
    REQUIRE(w.store.add_flag(key, storage::CommitFlag::unbuildable, "make failed"));
  }
  w.push(w.shas[4]);
  w.settle();
  CHECK(w.requests(Purpose::watch).size() == 1); // the broken head is never measured
  CHECK(w.store.head("demo", "master").value()->tested == w.shas[0]);
  w.push(w.shas[5]);
  w.settle();
  CHECK(w.requests(Purpose::watch).size() == 2);
  CHECK(w.store.head("demo", "master").value()->tested == w.shas[5]);
}
