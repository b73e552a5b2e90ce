#pragma once
// A VisitRunner over fakes (memory store, fake repo and builder) with tree "demo" and job "bench" registered:
// what the visit runner's tests start from.

#include "daemon/run/builds.hpp"
#include "daemon/run/visit_runner.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "kbuild/build_store.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <vector>

namespace bisectd::test {

struct RunnerFixture {
  TempDir tmp;
  MemoryStore store;
  FakeTrees trees{tmp.path()};
  std::vector<std::string> line = trees.repo("demo").line("c", 2);
  FakeJobs jobs{bench_job()};
  kbuild::BuildStore build_store{tmp.path() / "builds"};
  FakeBuilder builder;
  daemon::run::CostHistory costs;
  daemon::run::Builds builds{trees, build_store, store, costs, {builder, builder}};
  std::atomic<bool> stopping{false};
  daemon::run::VisitRunner runner{store, store, jobs, builds, costs, tmp.path(), stopping, nullptr};

  RunnerFixture() {
    storage::TreeRow tree;
    tree.name = "demo";
    REQUIRE(store.add_tree(tree, storage::JobRow{"bench", "bench.yaml", "", 0}));
  }
};

} // namespace bisectd::test
