#pragma once
// The watcher and its confirmation on an in-memory store and history, measured by a simulated lab (no SQLite, no
// git, no processes): the world of the watch tests (test_watcher.cpp, test_watch_rewrite.cpp).
#include "daemon/watch/watcher.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace bisectd::test {

// `machines` of group "local" named m0, m1, ...
inline std::vector<daemon::MachineInfo> local_machines(int machines) {
  std::vector<daemon::MachineInfo> out;
  for (int i = 0; i < machines; ++i) {
    out.push_back({"m" + std::to_string(i), "local", "local", "", false, "", false, "", 1});
  }
  return out;
}

// Tree "demo" watching master with job "bench"; `Starter` opens the bisections a confirmed shift asks for.
template <class Starter = FakeStarter> struct WatchWorld {
  TempDir tmp;
  MemoryStore store;
  FakeTrees trees{tmp.path()};
  FakeRepo& repo = trees.repo("demo");
  std::vector<std::string> shas = repo.line("c", 6); // c0..c5
  FakeJobs jobs{bench_job()};
  FakeLab lab;
  Starter starter;
  daemon::watch::WatchStores stores{store, store, store, store, store};
  daemon::watch::SeriesReader series{trees, store, store};
  daemon::watch::Confirmation confirmation{stores, series, jobs, lab, starter, 5};
  daemon::watch::Watcher watcher{stores, trees, series, jobs, confirmation, std::chrono::seconds(60)};
  std::map<std::string, double> level; // commit -> ops level of the simulated lab (100 when not set)
  SimulatedLab sim{store, [this](const std::string& c) { return level.contains(c) ? level[c] : 100.0; }, 0.01};

  explicit WatchWorld(int machines = 1) : lab(local_machines(machines)) {
    storage::TreeRow tree;
    tree.name = "demo";
    tree.branches = {"master"};
    tree.job = "bench";
    REQUIRE(store.add_tree(tree, storage::JobRow{"bench", "bench.yaml", "name: bench", 0}));
  }

  void push(const std::string& sha) { watcher.on_heads(*store.tree("demo").value(), {{"master", sha}}); }

  // Advances the watcher and runs what it queued, until nothing new is queued (bounded).
  void settle() {
    for (int i = 0; i < 30; ++i) {
      watcher.advance();
      if (sim.run_queued("local") == 0) {
        watcher.advance();
        return;
      }
    }
    FAIL("the watcher kept queueing work");
  }

  std::vector<storage::RequestRow> requests(storage::Purpose purpose) {
    std::vector<storage::RequestRow> out;
    for (const auto& r : store.all_requests()) {
      if (r.purpose == purpose) {
        out.push_back(r);
      }
    }
    return out;
  }

  // The commits of the watch requests, in the order they were queued.
  std::vector<std::string> watched() {
    std::vector<std::string> out;
    for (const auto& r : requests(storage::Purpose::watch)) {
      out.push_back(r.commit);
    }
    return out;
  }

  std::string tested() { return store.head("demo", "master").value()->tested; }
};

} // namespace bisectd::test
