// The bisection driver's decisions around the pure engine, on an in-memory store and history with a simulated lab
// (no SQLite, no git, no processes): picks become requests, a culprit is verified before it is reported, and the
// result is stored once with its mail (a merge culprit: test_driver_merge.cpp).
#include "driver_world.hpp"

#include <nlohmann/json.hpp>

using namespace bisectd;
using namespace bisectd::test;
using storage::BisectionState;
using storage::Purpose;

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
