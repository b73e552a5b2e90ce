// The bisection driver's decisions around the pure engine, on an in-memory store and history with a simulated lab
// (no SQLite, no git, no processes): picks become requests, a culprit is verified before it is reported, a merge
// culprit sends the search into its branch, and the result is stored once with its mail.
#include "daemon/bisection/driver.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>

using namespace bisectd;
using namespace bisectd::test;
using storage::BisectionState;
using storage::Purpose;

namespace {

struct DriverWorld {
  bool real_mail = false; // the driver reports through MailReporter (the real mail), else FakeReporter
  TempDir tmp;
  MemoryStore store;
  FakeTrees trees{tmp.path()};
  FakeRepo& repo = trees.repo("demo");
  FakeJobs jobs;
  FakeLab lab{{{"m0", "local", "local", "", false, "", false, "", 1}}};
  kbuild::BuildStore build_store{tmp.path() / "builds"};
  FakeBuilder builder;
  daemon::run::CostHistory costs;
  daemon::run::Builds builds{trees, build_store, store, costs, {builder, builder}};
  daemon::watch::SeriesReader series{trees, store, store};
  daemon::bisection::Priors priors{series, store, costs, builds, trees};
  daemon::bisection::BuildEquivalence equivalence{build_store, store};
  FakeVerifier verifier;
  FakeReporter reporter;
  daemon::reporting::MailReporter mail_reporter{store, trees, lab, {"bisectd <bisectd@localhost>", "", "", 40}};
  daemon::bisection::Driver driver{{store, store, store, store},
                                   {trees, jobs, lab, priors, equivalence, nullptr, verifier,
                                    real_mail ? static_cast<daemon::reporting::Reporter&>(mail_reporter) : reporter},
                                   nullptr};
  std::map<std::string, double> level;
  SimulatedLab sim{store, [this](const std::string& c) { return level.contains(c) ? level[c] : 100.0; }, 0.01};

  explicit DriverWorld(daemon::Job job = bench_job(), bool mail = false) : real_mail(mail), jobs(std::move(job)) {
    storage::TreeRow tree;
    tree.name = "demo";
    tree.branches = {"master"};
    tree.job = "bench";
    REQUIRE(store.add_tree(tree, storage::JobRow{"bench", "bench.yaml", "name: bench", 0}));
  }

  // Every commit from `first_bad` on (by position in `line`) reads `bad_level`.
  void plant(const std::vector<std::string>& line, std::size_t first_bad, double bad_level) {
    for (std::size_t i = first_bad; i < line.size(); ++i) {
      level[line[i]] = bad_level;
    }
  }

  // Ticks the driver and runs its requests until the bisection is no longer running (bounded).
  storage::BisectionRow run_to_end(std::int64_t id, int max_ticks = 300) {
    for (int tick = 0; tick < max_ticks; ++tick) {
      driver.advance_all();
      auto b = store.bisection(id).value();
      REQUIRE(b);
      if (b->state != BisectionState::running) {
        return *b;
      }
      sim.run_queued("local");
    }
    FAIL("the bisection did not finish in " << max_ticks << " ticks");
    return {};
  }
};

} // namespace

TEST_CASE("driver: a planted step is found, verified, and reported once", "[daemon][bisection]") {
  DriverWorld w;
  auto line = w.repo.line("c", 17);
  w.plant(line, 9, 80.0);
  auto id = w.driver.start({"demo", "master", line.front(), line.back(), "bench", "", storage::Origin::manual});
  REQUIRE(id);
  auto b = w.run_to_end(*id);
  CHECK(b.state == BisectionState::found);
  CHECK(b.culprit == line[9]);
  CHECK(b.p_culprit >= 0.99);
  CHECK(w.verifier.verified == std::vector<std::string>(w.verifier.calls, line[9])); // only the culprit
  REQUIRE(w.reporter.conclusions.size() == 1);
  CHECK(w.reporter.conclusions[0].culprit_sha == line[9]);
  CHECK(w.reporter.conclusions[0].chain[w.reporter.conclusions[0].parent] == line[8]);
  CHECK(w.store.all_reports().size() == 1);
  CHECK(w.store.due_mail(std::numeric_limits<std::int64_t>::max()).value().size() == 1);
  for (const auto& r : w.store.all_requests()) {
    CHECK(r.bisection_id == *id);
    CHECK(r.purpose == Purpose::bisect);
  }
  CHECK(b.runs == static_cast<std::int64_t>(w.store.samples("bench", line).value().size()));
  w.driver.advance_all(); // finished: nothing more is queued or reported
  CHECK(w.store.all_reports().size() == 1);
}

TEST_CASE("driver: a culprit found again for the same tree and job answers the first mail, unmailed",
          "[daemon][bisection][report]") {
  DriverWorld w(bench_job(), true);
  auto line = w.repo.line("c", 17);
  w.plant(line, 9, 80.0);
  auto start = [&] {
    return *w.driver.start({"demo", "master", line.front(), line.back(), "bench", "", storage::Origin::manual});
  };
  auto first = start();
  REQUIRE(w.run_to_end(first).culprit == line[9]);
  auto second = start();
  REQUIRE(w.run_to_end(second).culprit == line[9]);
  auto one = w.store.report(first).value();
  auto two = w.store.report(second).value();
  REQUIRE(one);
  REQUIRE(two);
  CHECK(one->repeat_of == 0);
  CHECK(two->repeat_of == one->id);
  CHECK(two->in_reply_to == one->message_id);
  CHECK(two->subject == "Re: " + one->subject);
  CHECK(two->body.find("This culprit was reported before for the same tree and job (bisection " +
                       std::to_string(first)) != std::string::npos);
  auto mail = w.store.due_mail(std::numeric_limits<std::int64_t>::max()).value();
  REQUIRE(mail.size() == 1); // one mail per culprit
  CHECK(mail[0].second.bisection_id == first);
  // The result `show` reads: the real parent and the report's shift (mean of the runs, culprit vs parent).
  auto result = nlohmann::json::parse(w.store.bisection(second).value()->result_json);
  CHECK(result["compared"]["parent"] == line[8]);
  CHECK(result["compared"]["same_binary_as"].is_null());
  CHECK(result["shift"]["estimate"].get<double>() == Approx(-0.2).margin(0.02));
  CHECK(result["shift"]["low"].get<double>() < result["shift"]["estimate"].get<double>());
}

TEST_CASE("driver: start refuses revisions that are unknown, equal or not ancestors", "[daemon][bisection]") {
  DriverWorld w;
  auto line = w.repo.line("c", 4);
  auto side = w.repo.add("side", {line[1]});
  auto start = [&](const std::string& good, const std::string& bad, const std::string& job = "bench") {
    return w.driver.start({"demo", "master", good, bad, job, "", storage::Origin::manual});
  };
  CHECK(start("nosuchrev", line[3]).error().message == "good: unknown revision 'nosuchrev' in tree demo");
  CHECK(start(line[0], line[0]).error().code == ErrorCode::invalid_input);
  CHECK(start(side, line[3]).error().message.find("is not an ancestor of bad") != std::string::npos);
  CHECK(start(line[0], line[3], "nojob").error().code == ErrorCode::not_found);
  CHECK(w.store.bisections().value().empty()); // nothing stored half
}

TEST_CASE("driver: while verification runs are pending nothing is reported", "[daemon][bisection]") {
  DriverWorld w;
  auto line = w.repo.line("c", 9);
  w.plant(line, 4, 80.0);
  w.verifier.answer.reset(); // the verifier waits for its runs
  auto id = *w.driver.start({"demo", "master", line.front(), line.back(), "bench", "", storage::Origin::manual});
  for (int tick = 0; tick < 200 && w.verifier.calls < 3; ++tick) {
    w.driver.advance_all();
    w.sim.run_queued("local");
  }
  REQUIRE(w.verifier.calls >= 3);
  CHECK(w.store.bisection(id).value()->state == BisectionState::running);
  CHECK(w.store.all_reports().empty());
  w.verifier.answer = daemon::verify::Verification{{"confirm: verified"}};
  auto b = w.run_to_end(id);
  CHECK(b.culprit == line[4]);
  CHECK(w.store.all_reports().size() == 1);
}

TEST_CASE("driver: a merge culprit sends the search into the merged branch", "[daemon][bisection]") {
  DriverWorld w;
  auto main = w.repo.line("m", 6);
  auto branch = w.repo.line("b", 5, main[2]);                 // a topic branch off m2
  auto merge = w.repo.add("merge", {main[5], branch.back()}); // merged after m5
  auto after = w.repo.line("a", 3, merge);
  std::vector<std::string> mainline(main.begin(), main.end());
  mainline.push_back(merge);
  mainline.insert(mainline.end(), after.begin(), after.end());
  w.plant(branch, 3, 80.0); // b3 regresses, on the branch
  w.plant({merge}, 0, 80.0);
  w.plant(after, 0, 80.0);
  auto id = *w.driver.start({"demo", "master", main.front(), after.back(), "bench", "", storage::Origin::manual});
  auto b = w.run_to_end(id, 600);
  CHECK(b.merge == merge);
  CHECK(b.state == BisectionState::found);
  CHECK(b.culprit == branch[3]);
  auto events = w.store.events(id).value();
  CHECK(std::any_of(events.begin(), events.end(), [](const auto& e) {
    return e.message.find("is a merge: searching the merged branch") != std::string::npos;
  }));
}

TEST_CASE("driver: an endpoint that cannot be built fails the bisection", "[daemon][bisection]") {
  DriverWorld w;
  auto line = w.repo.line("c", 5);
  auto key = daemon::flag_key(*w.jobs.get("bench").value(), line.back());
  for (int failure = 0; failure < storage::CommitFlags::k_failures_to_skip; ++failure) {
    REQUIRE(w.store.add_flag(key, storage::CommitFlag::unbuildable, "make: error"));
  }
  auto id = *w.driver.start({"demo", "master", line.front(), line.back(), "bench", "", storage::Origin::manual});
  w.driver.advance_all();
  auto b = w.store.bisection(id).value();
  CHECK(b->state == BisectionState::failed);
  CHECK(b->error == "an endpoint (good or bad) cannot be built or run; see `bisectctl results`");
  CHECK(w.store.all_requests().empty());
  CHECK(w.store.all_reports().empty());
}

TEST_CASE("driver: a suspect's side lists every commit that builds identically", "[daemon][bisection]") {
  // 0..3 build identically (1 links to 0, 3 to 0 through 2), 4 is its own, 5 shares 4's build.
  std::vector<bisect::Candidate> chain(6, bisect::Candidate{"", 1.0, false, std::nullopt});
  chain[1].same_as = 0;
  chain[2].same_as = 0;
  chain[3].same_as = 2;
  chain[5].same_as = 4;
  std::vector<std::string> commits{"c0", "c1", "c2", "c3", "c4", "c5"};
  CHECK(daemon::bisection::build_root(chain, 3) == 0);
  CHECK(daemon::bisection::reference_parent(chain, 4) == 0);
  CHECK(daemon::bisection::same_build(commits, chain, 0) == std::vector<std::string>{"c0", "c1", "c2", "c3"});
  CHECK(daemon::bisection::same_build(commits, chain, 4) == std::vector<std::string>{"c4", "c5"});
}

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

TEST_CASE("priors: a bisection of a rewritten branch gets the shift its detection confirmed", "[daemon][bisection]") {
  DriverWorld w;
  auto line = w.repo.line("c", 4);
  auto old_head = w.repo.line("o", 1, line[1])[0]; // the head before the rewrite
  storage::BisectionRow b;
  b.id = 7;
  b.tree = "demo";
  b.job = "bench";
  b.metric = "ops";
  b.good = line[1]; // the merge base: not one of the detection's two heads
  b.bad = line[3];
  b.origin = storage::Origin::detect;
  storage::DetectionRow d;
  d.tree = "demo";
  d.branch = "master";
  d.job = "bench";
  d.metric = "ops";
  d.good = old_head;
  d.bad = line[3];
  d.state = storage::DetectionState::confirmed;
  d.change = -0.2;
  d.rewritten = true;
  d.base = line[1];
  d.bisection_id = 8; // another bisection's
  d.id = w.store.add_detection(d).value();

  bisect::Settings settings;
  w.priors.apply_history(b, bench_job(), settings);
  CHECK_FALSE(settings.expected_shift);
  d.bisection_id = 7;
  REQUIRE(w.store.update_detection(d));
  w.priors.apply_history(b, bench_job(), settings);
  REQUIRE(settings.expected_shift);
  CHECK(*settings.expected_shift == Approx(-0.2));
}
