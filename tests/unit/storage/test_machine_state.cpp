// storage::Store machine_state (migration 4): consecutive infra failures and quarantine survive a reopen.
#include "base/fs.hpp"
#include "storage/store.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::storage;

TEST_CASE("storage::Store keeps machine state across a reopen", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-store-").value();
  {
    auto store = Store::open(dir / "bisectd.db").value();
    CHECK(store->machine_states().value().empty());
    REQUIRE(store->put_machine_state({"box-1", 2, false, "", 0}));
    REQUIRE(store->put_machine_state({"box-1", 3, true, "ssh box-1: unreachable", 0}));
    REQUIRE(store->put_machine_state({"box-0", 0, false, "", 0}));
  }
  auto store = Store::open(dir / "bisectd.db").value();
  auto states = store->machine_states().value();
  REQUIRE(states.size() == 2);
  CHECK(states[0].name == "box-0");
  CHECK(states[1].name == "box-1");
  CHECK(states[1].consecutive_infra == 3);
  CHECK(states[1].quarantined);
  CHECK(states[1].reason == "ssh box-1: unreachable");
  CHECK(states[1].updated_at > 0);
  std::filesystem::remove_all(dir);
}
