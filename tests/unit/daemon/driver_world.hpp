#pragma once
// The bisection driver on an in-memory store and history with a simulated lab (no SQLite, no git, no processes),
// shared by the driver's unit tests.
#include "daemon/bisection/driver.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace bisectd::test {

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
      if (b->state != storage::BisectionState::running) {
        return *b;
      }
      sim.run_queued("local");
    }
    FAIL("the bisection did not finish in " << max_ticks << " ticks");
    return {};
  }
};

} // namespace bisectd::test
