// Why a commit is skipped, as a report lists it: the flags that skip it with the message stored with each.
#include "base/fs.hpp"
#include "storage/store.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::storage;

TEST_CASE("storage: a skipped commit's reason names its flags and their stored messages", "[storage][flags]") {
  auto dir = base::make_temp_dir("bisectd-skip-reason-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    REQUIRE(store->add_flag("job", "aaa", "", CommitFlag::unbuildable, "mm/x.c:12:5: error: 'y' undeclared"));
    auto a = store->flags("job", "aaa").value();
    CHECK(a.is_skipped());
    CHECK(a.skip_reason() == "unbuildable: mm/x.c:12:5: error: 'y' undeclared");

    // One failed boot is not a skip (nor a reason); the second is, with the latest message.
    REQUIRE(store->add_flag("job", "bbb", "", CommitFlag::unbootable, "panic on boot 1"));
    CHECK(store->flags("job", "bbb").value().skip_reason().empty());
    REQUIRE(store->add_flag("job", "bbb", "", CommitFlag::unbootable, "no login prompt on boot 2"));
    CHECK(store->flags("job", "bbb").value().skip_reason() == "unbootable (2 times): no login prompt on boot 2");

    REQUIRE(store->add_flag("job", "ccc", "", CommitFlag::unrunnable, ""));
    REQUIRE(store->add_flag("job", "ccc", "", CommitFlag::infra, "lab: visit timed out (attempt 3 of 3: skipped)"));
    CHECK(store->flags("job", "ccc").value().skip_reason() ==
          "unrunnable; infra: lab: visit timed out (attempt 3 of 3: skipped)");
    CHECK(store->flags("other-job", "aaa").value().skip_reason().empty()); // per job
  }
  std::filesystem::remove_all(dir);
}
