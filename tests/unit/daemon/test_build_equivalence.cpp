#include "daemon/build_equivalence.hpp"

#include "bisect/bcb_model.hpp"
#include "bisect/engine_data.hpp"
#include "daemon/visit_runner.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using daemon::IdenticalBuild;

namespace {

using Fingerprints = std::vector<std::optional<std::string>>;

bool same(const IdenticalBuild& a, const IdenticalBuild& b) {
  return a.commit == b.commit && a.previous == b.previous && a.root == b.root;
}

std::vector<bisect::Candidate> chain_of(std::size_t n) {
  std::vector<bisect::Candidate> chain(n);
  for (std::size_t i = 0; i < n; ++i) {
    chain[i].id = static_cast<char>('0' + i) + std::string(39, 'a');
  }
  return chain;
}

} // namespace

TEST_CASE("identical_builds links each fingerprint to the nearest earlier known one", "[daemon]") {
  Fingerprints fps{"A", std::nullopt, "", "A", "B", "B", std::nullopt, "B"};
  auto links = daemon::identical_builds(fps);
  REQUIRE(links.size() == 3);
  CHECK(same(links[0], {3, 0, 0}));  // unknown ("") and unbuilt commits in between are stepped over
  CHECK(same(links[1], {5, 4, 4}));
  CHECK(same(links[2], {7, 5, 4}));  // a run of identical builds shares its first one's samples

  CHECK(daemon::identical_builds({"A", "B", "A"}).empty()); // only neighbours among known builds are compared
  CHECK(daemon::identical_builds({std::nullopt, "", std::nullopt}).empty());
  CHECK(daemon::identical_builds({}).empty());
}

TEST_CASE("link_identical_builds gives the engine zero prior between identical builds", "[daemon]") {
  auto chain = chain_of(6);
  auto links = daemon::identical_builds({"A", std::nullopt, std::nullopt, "A", "B", std::nullopt});
  daemon::link_identical_builds(chain, links);
  CHECK_FALSE(chain[0].same_as);
  for (std::size_t i : {1U, 2U, 3U}) {
    INFO(i);
    REQUIRE(chain[i].same_as);
    CHECK(*chain[i].same_as == 0);
  }
  CHECK_FALSE(chain[4].same_as);
  CHECK_FALSE(chain[5].same_as);

  bisect::Problem problem;
  problem.chain = chain;
  problem.samples = {{0, 100.0, "boot-a", 1}, {3, 101.0, "boot-b", 2}, {5, 80.0, "boot-c", 3}};
  std::string error;
  auto data = bisect::make_chain_data(problem, error);
  REQUIRE(data);
  CHECK(data->at(3).size() == 2); // commit 3 uses the good commit's build: both samples describe it
  CHECK(data->at(0).size() == 2);
  auto prior = bisect::commit_prior(chain, *data, 0.1);
  CHECK(prior[1] == 0);
  CHECK(prior[2] == 0);
  CHECK(prior[3] == 0);
  CHECK(prior[4] > 0); // the first commit whose build differs can hold the change
  CHECK(prior[5] > 0);
}

TEST_CASE("BuildEquivalence reads fingerprints from the build store and tells each commit once", "[daemon]") {
  test::TempDir tmp;
  daemon::Context context;
  auto store = storage::Store::open(tmp.path() / "state.db");
  REQUIRE(store);
  context.store = std::move(*store);
  context.build_store = std::make_unique<kbuild::BuildStore>(tmp.path() / "builds");
  daemon::Job job;
  job.name = "bench";
  job.build.command = {"make"};
  job.build.artifacts = {"bench"};
  auto hash = daemon::recipe_for(job, "").hash();
  REQUIRE(hash);

  auto chain = chain_of(5);
  auto save = [&](std::size_t i, const std::string& fingerprint, kbuild::BuildOutcome outcome) {
    kbuild::BuildResult result;
    result.outcome = outcome;
    result.fingerprint = fingerprint;
    REQUIRE(context.build_store->save(chain[i].id, *hash, result));
  };
  save(0, "f00d", kbuild::BuildOutcome::ok);
  save(1, "", kbuild::BuildOutcome::ok);        // stored before fingerprints existed: unknown
  save(2, "f00d", kbuild::BuildOutcome::ok);
  save(3, "f00d", kbuild::BuildOutcome::failed); // a failed build has no binary to compare
  save(4, "beef", kbuild::BuildOutcome::ok);

  storage::BisectionRow b;
  b.tree = "linux";
  b.job = job.name;
  b.good = b.range_good = chain.front().id;
  b.bad = b.range_bad = chain.back().id;
  b.metric = "ops";
  auto id = context.store->add_bisection(b);
  REQUIRE(id);
  b.id = *id;

  daemon::BuildEquivalence equivalence;
  for (int tick = 0; tick < 2; ++tick) {
    auto linked = chain;
    equivalence.apply(context, b, job, linked);
    CHECK(linked[1].same_as == std::optional<std::size_t>(0));
    CHECK(linked[2].same_as == std::optional<std::size_t>(0));
    CHECK_FALSE(linked[3].same_as);
    CHECK_FALSE(linked[4].same_as);
  }
  auto events = context.store->events(b.id);
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
