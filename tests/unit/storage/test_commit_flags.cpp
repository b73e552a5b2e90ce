// Commit flags (issue 30, item 2): counted per job definition, listed with their reasons, cleared by the operator;
// the migration drops the flags raised under the old one-failure rule.
#include "base/clock.hpp"
#include "base/fs.hpp"
#include "storage/query.hpp"
#include "storage/schema.hpp"
#include "storage/sqlite.hpp"
#include "storage/store.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::storage;

namespace {

struct FlagStore {
  std::filesystem::path dir = base::make_temp_dir("bisectd-flags-").value();
  std::unique_ptr<Store> store = Store::open(dir / "bisectd.db").value();
  ~FlagStore() { std::filesystem::remove_all(dir); }
};

const std::string k_sha = "0123456789abcdef0123456789abcdef01234567";

} // namespace

TEST_CASE("commit flags: one failure is no verdict; two are; infra once is", "[storage]") {
  CommitFlags flags;
  flags.unrunnable = 1;
  flags.unbuildable = 1;
  flags.unbootable = 1;
  CHECK_FALSE(flags.is_skipped());
  flags.unrunnable = 2;
  CHECK(flags.is_skipped());
  CHECK(flags.is_verdict(CommitFlag::unrunnable));
  CommitFlags infra;
  infra.infra = 1; // raised only once a request's attempts are spent
  CHECK(infra.is_skipped());
}

TEST_CASE("commit flags: a flag belongs to one definition of the job", "[storage]") {
  FlagStore t;
  FlagKey old_job{"bench", "def-old", k_sha, ""};
  FlagKey new_job{"bench", "def-new", k_sha, ""};
  REQUIRE(t.store->add_flag(old_job, CommitFlag::unrunnable, "run 0: benchmark exit 3"));
  CHECK(t.store->add_flag(old_job, CommitFlag::unrunnable, "run 0: benchmark exit 3").value() == 2);
  CHECK(t.store->flags(old_job).value().is_skipped());
  CHECK(t.store->flags(new_job).value().unrunnable == 0); // `tree set --job` with a fixed job: a clean slate
  CHECK(t.store->add_flag(new_job, CommitFlag::unrunnable, "run 1: benchmark exit 4").value() == 1);
}

TEST_CASE("commit flags: listed by commit prefix with their reasons; cleared per job", "[storage]") {
  FlagStore t;
  REQUIRE(t.store->add_flag({"bench", "d1", k_sha, ""}, CommitFlag::unrunnable, "first"));
  REQUIRE(t.store->add_flag({"bench", "d1", k_sha, ""}, CommitFlag::unrunnable, "run 2: benchmark exit 3"));
  REQUIRE(t.store->add_flag({"bench", "d1", k_sha, "layout"}, CommitFlag::unbuildable, "make: Error 2"));
  REQUIRE(t.store->add_flag({"other", "d2", k_sha, ""}, CommitFlag::infra, "machine unreachable"));
  REQUIRE(t.store->add_flag({"bench", "d1", "fedcba9876543210", ""}, CommitFlag::unrunnable, "elsewhere"));

  auto rows = t.store->commit_flags(k_sha.substr(0, 10)).value();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].key.job == "bench");
  CHECK(rows[0].key.variant.empty());
  CHECK(rows[0].flag == CommitFlag::unrunnable);
  CHECK(rows[0].count == 2);
  CHECK(rows[0].message == "run 2: benchmark exit 3"); // the last failure says why
  CHECK(rows[0].updated_at > 0);
  CHECK(rows[1].key.variant == "layout");
  CHECK(rows[2].key.job == "other");

  CHECK(t.store->clear_flags("bench", k_sha).value() == 2); // every definition and variant of the job
  rows = t.store->commit_flags(k_sha).value();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].key.job == "other");
  CHECK(t.store->clear_flags("bench", k_sha).value() == 0);
  CHECK(t.store->commit_flags("fedcba98").value().size() == 1); // another commit is left alone
}

TEST_CASE("commit flags: the migration drops the flags raised by a single failure under the old rule", "[storage]") {
  auto dir = base::make_temp_dir("bisectd-flags-migrate-").value();
  {
    auto connection = Connection::open(dir / "bisectd.db").value();
    REQUIRE(migrate(*connection, 10));
    REQUIRE(connection->run("INSERT INTO commit_flags (job, commit_sha, variant, flag, message, updated_at) "
                            "VALUES ('bench', ?, '', 'unrunnable', 'benchmark timed out after 60.0s', 1)",
                            {Value(k_sha)}));
  }
  {
    auto store = Store::open(dir / "bisectd.db").value(); // migrates to the current version
    CHECK(store->commit_flags(k_sha).value().empty());
    CHECK_FALSE(store->flags({"bench", "", k_sha, ""}).value().is_skipped());
    REQUIRE(store->add_flag({"bench", "d1", k_sha, ""}, CommitFlag::unrunnable, "run 0: exit 3"));
    CHECK(store->commit_flags(k_sha).value().size() == 1);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("requests: a retry meant for elsewhere is claimed at once by another machine, by its own after retry_at",
          "[storage]") {
  FlagStore t;
  RequestRow r;
  r.tree = "demo";
  r.job = "bench";
  r.commit = k_sha;
  r.machine_group = "local";
  auto id = t.store->enqueue(r).value();
  REQUIRE(t.store->claim_request("local", "m0").value());
  auto later = base::unix_now() + 60;
  REQUIRE(t.store->fail_request(id, "benchmark_failed", "run 0: exit 3", later, "m0"));
  CHECK_FALSE(t.store->claim_request("local", "m0").value());
  auto other = t.store->claim_request("local", "m1").value();
  REQUIRE(other);
  CHECK(other->id == id);
  REQUIRE(t.store->fail_request(id, "timeout", "run 0: timed out", later)); // infra-like: nobody before retry_at
  CHECK_FALSE(t.store->claim_request("local", "m0").value());
  CHECK_FALSE(t.store->claim_request("local", "m1").value());
  REQUIRE(t.store->fail_request(id, "benchmark_failed", "run 0: exit 3", base::unix_now(), "m0"));
  CHECK(t.store->claim_request("local", "m0").value()); // its own machine, once the delay is over
}

TEST_CASE("commit flags: a success forgets the single failures of its key, not verdicts or infra", "[storage]") {
  FlagStore t;
  FlagKey key{"bench", "d1", k_sha, ""};
  FlagKey layout{"bench", "d1", k_sha, "layout"};
  REQUIRE(t.store->add_flag(key, CommitFlag::unrunnable, "run 0: benchmark exit 3"));
  REQUIRE(t.store->add_flag(key, CommitFlag::unbootable, "Oops"));
  REQUIRE(t.store->add_flag(key, CommitFlag::unbootable, "Oops"));
  REQUIRE(t.store->add_flag(key, CommitFlag::infra, "machine unreachable"));
  REQUIRE(t.store->add_flag(layout, CommitFlag::unbuildable, "make: Error 2"));
  REQUIRE(t.store->forget_single_failures(key));
  auto flags = t.store->flags(key).value();
  CHECK(flags.unrunnable == 0);
  CHECK(flags.unbootable == 2); // a verdict stays (only `commit clear` drops it)
  CHECK(flags.infra == 1);
  CHECK(t.store->flags(layout).value().unbuildable == 1); // another variant's build
}
