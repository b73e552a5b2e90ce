// The bisection driver around a merge culprit: the search moves into the merged branch, borrows the mainline's
// runs as its ends, leaves the merge's confirm pairs to the branch's culprit, and counts every phase's runs.
#include "driver_world.hpp"

#include <algorithm>
#include <set>

using namespace bisectd;
using namespace bisectd::test;
using storage::BisectionState;
using storage::Purpose;

TEST_CASE("driver: a bisection counts every run its requests caused, across a merge phase, and reused runs apart",
          "[daemon][bisection]") {
  DriverWorld w;
  auto main = w.repo.line("m", 6);
  auto branch = w.repo.line("b", 5, main[2]);
  auto merge = w.repo.add("merge", {main[5], branch.back()});
  auto after = w.repo.line("a", 3, merge);
  w.plant(branch, 3, 80.0);
  w.plant({merge}, 0, 80.0);
  w.plant(after, 0, 80.0);
  // The alert's confirmation runs on both endpoints, measured before the bisection by a request of no bisection.
  for (const auto& commit : {main.front(), after.back()}) {
    storage::RequestRow r;
    r.tree = "demo";
    r.job = "bench";
    r.commit = commit;
    r.purpose = Purpose::confirm;
    r.machine_group = "local";
    r.runs = 3;
    REQUIRE(w.store.enqueue(r));
  }
  REQUIRE(w.sim.run_queued("local") == 2);
  auto id = *w.driver.start({"demo", "master", main.front(), after.back(), "bench", "", storage::Origin::manual});
  auto b = w.run_to_end(id, 600);
  REQUIRE(b.state == BisectionState::found);
  REQUIRE(b.merge == merge); // two phases: the mainline, then the merged branch

  std::set<std::int64_t> own;
  for (const auto& r : w.store.all_requests()) {
    if (r.bisection_id == id) {
      own.insert(r.id);
    }
  }
  std::vector<std::string> every(main.begin(), main.end());
  every.insert(every.end(), branch.begin(), branch.end());
  every.push_back(merge);
  every.insert(every.end(), after.begin(), after.end());
  std::int64_t caused = 0, others = 0;
  std::set<std::string> boots;
  auto samples = w.store.samples("bench", every).value();
  for (const auto& s : samples) {
    if (own.contains(s.request_id)) {
      ++caused;
      boots.insert(s.boot_id);
    } else {
      ++others;
    }
  }
  CHECK(others == 6);
  CHECK(b.runs == caused); // both phases, verification included
  CHECK(b.boots == static_cast<std::int64_t>(boots.size()));
  CHECK(b.runs_reused == 6); // the alert's runs, used in the mainline phase, not counted in runs
  CHECK(b.builds > 0);
  REQUIRE(w.reporter.conclusions.size() == 1);
  CHECK(w.reporter.conclusions[0].runs == caused);
  CHECK(w.reporter.conclusions[0].runs_reused == 6);
}

namespace {

// m0..m5 on the mainline, a topic branch b0..b4 off m2 merged after m5, then a0..a2; the merge and everything
// after it read 80 (from 100).
struct MergedBranch {
  explicit MergedBranch(DriverWorld& w)
      : main(w.repo.line("m", 6)), branch(w.repo.line("b", 5, main[2])),
        merge(w.repo.add("merge", {main[5], branch.back()})), after(w.repo.line("a", 3, merge)) {
    w.plant({merge}, 0, 80.0);
    w.plant(after, 0, 80.0);
  }
  std::vector<std::string> main, branch;
  std::string merge;
  std::vector<std::string> after;
};

// The requests of the bisection queued after its search moved into the merged branch.
std::vector<storage::RequestRow> branch_phase_requests(DriverWorld& w, std::int64_t id,
                                                       const std::vector<std::string>& branch) {
  std::vector<storage::RequestRow> out;
  for (const auto& r : w.store.all_requests()) {
    if (r.bisection_id == id && std::find(branch.begin(), branch.end(), r.commit) != branch.end()) {
      out.push_back(r);
    }
  }
  return out;
}

} // namespace

TEST_CASE("driver: a merged branch's search starts from the merge's runs, not new endpoint runs",
          "[daemon][bisection]") {
  DriverWorld w;
  MergedBranch h(w);
  w.plant(h.branch, 3, 80.0); // b3 regresses
  auto id = *w.driver.start({"demo", "master", h.main.front(), h.after.back(), "bench", "", storage::Origin::manual});
  auto b = w.run_to_end(id, 600);
  REQUIRE(b.merge == h.merge);
  CHECK(b.culprit == h.branch[3]);
  // The tip reads like the merge (measured on the mainline): the branch's search never runs it (without the
  // stand-in the engine's first step measures both ends of the branch).
  auto requests = branch_phase_requests(w, id, h.branch);
  REQUIRE_FALSE(requests.empty());
  for (const auto& r : requests) {
    CHECK(r.commit != h.branch.back());
  }
  std::vector<std::int64_t> own;
  for (const auto& r : w.store.all_requests()) {
    if (r.bisection_id == id) {
      own.push_back(r.id);
    }
  }
  // The stand-ins' runs are the bisection's own, counted once.
  CHECK(b.runs == static_cast<std::int64_t>(w.store.request_metric_samples(own, "ops").value().size()));
}

TEST_CASE("driver: a merge's confirm pairs are left to its branch's culprit", "[daemon][bisection]") {
  auto job = bench_job();
  job.verify.confirm = true;
  job.verify.pairs = 6;
  DriverWorld w(job);
  MergedBranch h(w);
  w.plant(h.branch, 3, 80.0);
  auto id = *w.driver.start({"demo", "master", h.main.front(), h.after.back(), "bench", "", storage::Origin::manual});
  auto b = w.run_to_end(id, 600);
  REQUIRE(b.merge == h.merge);
  CHECK(b.culprit == h.branch[3]);
  // Nothing verifies the merge or its first parent; the branch's culprit and its parent get the pairs.
  std::set<std::string> verified;
  for (const auto& r : w.store.all_requests()) {
    if (r.bisection_id == id && r.purpose == storage::Purpose::verify && r.variant.empty()) {
      verified.insert(r.commit);
    }
  }
  CHECK_FALSE(verified.contains(h.merge));
  CHECK_FALSE(verified.contains(h.main.back()));
  CHECK(verified.contains(h.branch[3]));
  CHECK(verified.contains(h.branch[2]));
}

TEST_CASE("driver: a merge that regresses where its branch alone does not is named, the tip measured itself",
          "[daemon][bisection]") {
  DriverWorld w;
  MergedBranch h(w); // the branch reads 100 throughout: only the merge combines into a regression
  auto id = *w.driver.start({"demo", "master", h.main.front(), h.after.back(), "bench", "", storage::Origin::manual});
  auto b = w.run_to_end(id, 600);
  CHECK(b.state == BisectionState::found);
  CHECK(b.culprit == h.merge);
  auto requests = branch_phase_requests(w, id, h.branch);
  CHECK(std::any_of(requests.begin(), requests.end(), [&](const auto& r) { return r.commit == h.branch.back(); }));
}
