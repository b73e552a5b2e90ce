// A tree's watch error (why its last fetch failed): stored with the time of the first failure in a row, cleared by a
// good fetch, not written for a removed or unknown tree.
#include "base/fs.hpp"
#include "storage/store.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::storage;

TEST_CASE("storage::Store keeps a tree's watch error and when it started", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-store-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    TreeRow tree;
    tree.name = "demo";
    tree.url = "git://127.0.0.1:9/demo";
    tree.job = "job";
    REQUIRE(store->add_tree(tree, JobRow{"job", "/x/job.yaml", "name: job", 0}));
    CHECK(store->tree("demo").value()->watch_error.empty());
    CHECK(store->tree("demo").value()->watch_error_at == 0);

    REQUIRE(store->set_watch_error("demo", "fetch git://127.0.0.1:9/demo: timed out after 3s (fetch_timeout)"));
    auto failing = store->tree("demo").value().value();
    CHECK(failing.watch_error == "fetch git://127.0.0.1:9/demo: timed out after 3s (fetch_timeout)");
    CHECK(failing.watch_error_at > 0);

    REQUIRE(store->set_watch_error("demo", "fetch git://127.0.0.1:9/demo: git exit 128: fatal: gone"));
    auto still = store->trees().value().at(0);
    CHECK(still.watch_error == "fetch git://127.0.0.1:9/demo: git exit 128: fatal: gone");
    CHECK(still.watch_error_at == failing.watch_error_at); // the first failure of the row is kept

    REQUIRE(store->set_watch_error("demo", ""));
    CHECK(store->tree("demo").value()->watch_error.empty());
    CHECK(store->tree("demo").value()->watch_error_at == 0);

    CHECK(store->set_watch_error("nope", "x").error().code == ErrorCode::not_found);
    REQUIRE(store->remove_tree("demo"));
    CHECK(store->set_watch_error("demo", "x").error().code == ErrorCode::not_found);
  }
  std::filesystem::remove_all(dir);
}
