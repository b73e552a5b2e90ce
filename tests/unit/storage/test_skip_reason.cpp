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
    auto key = [](const std::string& job, const std::string& commit) { return FlagKey{job, "def1", commit, ""}; };
    // One failure is evidence, not a verdict (nor a reason); the second is, with the latest message.
    REQUIRE(store->add_flag(key("job", "aaa"), CommitFlag::unbuildable, "mm/x.c:12:5: error: 'x' undeclared"));
    CHECK(store->flags(key("job", "aaa")).value().skip_reason().empty());
    REQUIRE(store->add_flag(key("job", "aaa"), CommitFlag::unbuildable, "mm/x.c:12:5: error: 'y' undeclared"));
    auto a = store->flags(key("job", "aaa")).value();
    CHECK(a.is_skipped());
    CHECK(a.skip_reason() == "unbuildable (2 times): mm/x.c:12:5: error: 'y' undeclared");

    // infra is raised once a request spent its attempts: a verdict at once; the single unrunnable is not named.
    REQUIRE(store->add_flag(key("job", "ccc"), CommitFlag::unrunnable, ""));
    REQUIRE(store->add_flag(key("job", "ccc"), CommitFlag::infra, "lab: visit timed out (attempt 3 of 3: skipped)"));
    CHECK(store->flags(key("job", "ccc")).value().skip_reason() ==
          "infra: lab: visit timed out (attempt 3 of 3: skipped)");
    CHECK(store->flags(key("other-job", "aaa")).value().skip_reason().empty()); // per job
    CHECK(store->flags(FlagKey{"job", "def2", "aaa", ""}).value().skip_reason().empty()); // per job definition
  }
  std::filesystem::remove_all(dir);
}
