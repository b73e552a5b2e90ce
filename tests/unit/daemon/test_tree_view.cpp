// GET /api/v1/trees needs no token: a tree URL's credentials must not be in its answer (bisectctl tree show/list
// print it), while the stored URL keeps them for fetching.
#include "base/fs.hpp"
#include "daemon/api/views.hpp"
#include "storage/store.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

TEST_CASE("api::tree_json answers the tree URL without its userinfo", "[api][hostile]") {
  auto dir = base::make_temp_dir("bisectd-tree-view-").value();
  {
    auto store = storage::Store::open(dir / "bisectd.db").value();
    storage::TreeRow tree;
    tree.name = "secret";
    tree.url = "https://robot:s3cret-token@git.example.org/linux.git";
    tree.branches = {"master"};
    tree.job = "job";
    auto view = daemon::api::tree_json(tree, *store);
    CHECK(view["url"] == "https://git.example.org/linux.git");
    CHECK(view.dump().find("s3cret") == std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
