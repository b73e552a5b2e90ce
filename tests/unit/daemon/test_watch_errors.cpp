// The tree's watch error: a failed fetch is stored (what `tree show` and `status` report), a branch the remote lacks
// is one too, a good fetch clears it.
#include "daemon/watch/watcher.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::test;

TEST_CASE("watch: a failed fetch is the tree's watch error until a good one", "[daemon][watch]") {
  TempDir tmp;
  MemoryStore store;
  FakeTrees trees{tmp.path()};
  FakeJobs jobs{bench_job()};
  FakeLab lab{{{"m0", "local", "local", "", false, "", false, "", 1}}};
  FakeStarter starter;
  daemon::watch::WatchStores stores{store, store, store, store, store};
  daemon::watch::SeriesReader series{trees, store, store};
  daemon::watch::Confirmation confirmation{stores, series, jobs, lab, starter, 5};
  daemon::watch::Watcher watcher{stores, trees, series, jobs, confirmation, std::chrono::seconds(60)};
  storage::TreeRow tree;
  tree.name = "demo";
  tree.url = "git://127.0.0.1:9/demo";
  tree.branches = {"master"};
  tree.job = "bench";
  REQUIRE(store.add_tree(tree, storage::JobRow{"bench", "bench.yaml", "name: bench", 0}));
  auto row = [&] { return store.tree("demo").value().value(); };

  const std::string timeout = "fetch git://127.0.0.1:9/demo: timed out after 3s (fetch_timeout)";
  watcher.on_fetch_failed(row(), timeout);
  CHECK(row().watch_error == timeout);
  auto since = row().watch_error_at;
  CHECK(since > 0);
  watcher.on_fetch_failed(row(), timeout); // the same error again: kept, with its first time
  CHECK(row().watch_error_at == since);

  watcher.on_heads(row(), {{"next", std::string(40, 'a')}});
  CHECK(row().watch_error == "branch 'master' not found in git://127.0.0.1:9/demo");

  watcher.on_heads(row(), {{"master", std::string(40, 'b')}});
  CHECK(row().watch_error.empty());
  CHECK(row().watch_error_at == 0);
  CHECK(store.head("demo", "master").value()->seen == std::string(40, 'b'));
}
