#include "daemon/bisection/build_equivalence.hpp"
#include "daemon/run/builds.hpp"
#include "fakes/memory_store.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

namespace {

std::vector<bisect::Candidate> chain_of(std::size_t n) {
  std::vector<bisect::Candidate> chain(n);
  for (std::size_t i = 0; i < n; ++i) {
    chain[i].id = static_cast<char>('0' + i) + std::string(39, 'a');
  }
  return chain;
}

} // namespace

TEST_CASE("BuildEquivalence reads fingerprints from the build store and tells each commit once", "[daemon]") {
  test::TempDir tmp;
  test::MemoryStore store;
  kbuild::BuildStore build_store(tmp.path() / "builds");
  daemon::Job job;
  job.name = "bench";
  job.build.command = {"make"};
  job.build.artifacts = {"bench"};
  auto hash = daemon::run::recipe_for(job, "").hash();
  REQUIRE(hash);

  auto chain = chain_of(5);
  auto save = [&](std::size_t i, const std::string& fingerprint, kbuild::BuildOutcome outcome) {
    kbuild::BuildResult result;
    result.outcome = outcome;
    result.fingerprint = fingerprint;
    REQUIRE(build_store.save(chain[i].id, *hash, result));
  };
  save(0, "f00d", kbuild::BuildOutcome::ok);
  save(1, "", kbuild::BuildOutcome::ok); // stored before fingerprints existed: unknown
  save(2, "f00d", kbuild::BuildOutcome::ok);
  save(3, "f00d", kbuild::BuildOutcome::failed); // a failed build has no binary to compare
  save(4, "beef", kbuild::BuildOutcome::ok);

  storage::BisectionRow b;
  b.tree = "linux";
  b.job = job.name;
  b.good = b.range_good = chain.front().id;
  b.bad = b.range_bad = chain.back().id;
  b.metric = "ops";
  auto id = store.add_bisection(b);
  REQUIRE(id);
  b.id = *id;

  daemon::bisection::BuildEquivalence equivalence(build_store, store);
  for (int tick = 0; tick < 2; ++tick) {
    auto linked = chain;
    equivalence.apply(b, job, linked);
    CHECK(linked[1].same_as == std::optional<std::size_t>(0));
    CHECK(linked[2].same_as == std::optional<std::size_t>(0));
    CHECK_FALSE(linked[3].same_as);
    CHECK_FALSE(linked[4].same_as);
  }
  auto events = store.events(b.id);
  REQUIRE(events);
  std::vector<std::string> told;
  for (const auto& event : *events) {
    if (event.message.find("builds identical") != std::string::npos) {
      told.push_back(event.message);
    }
  }
  REQUIRE(told.size() == 1); // once per (bisection, commit), not once per tick
  CHECK(told[0] == "2aaaaaaaaa builds identical to 0aaaaaaaaa: shares its samples (as do the 1 commit between them)");
}
