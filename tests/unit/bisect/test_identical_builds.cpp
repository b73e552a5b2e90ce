#include "bisect/bcb_model.hpp"
#include "bisect/engine_data.hpp"
#include "bisect/identical_builds.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using bisect::IdenticalBuild;

namespace {

using Fingerprints = std::vector<std::optional<std::string>>;

bool same(const IdenticalBuild& a, const IdenticalBuild& b) {
  return a.commit == b.commit && a.previous == b.previous && a.root == b.root;
}

std::vector<bisect::Candidate> candidates_of(std::size_t n) {
  std::vector<bisect::Candidate> chain(n);
  for (std::size_t i = 0; i < n; ++i) {
    chain[i].id = static_cast<char>('0' + i) + std::string(39, 'a');
  }
  return chain;
}

} // namespace

TEST_CASE("identical_builds links each fingerprint to the nearest earlier known one", "[bisect]") {
  Fingerprints fps{"A", std::nullopt, "", "A", "B", "B", std::nullopt, "B"};
  auto links = bisect::identical_builds(fps);
  REQUIRE(links.size() == 3);
  CHECK(same(links[0], {3, 0, 0})); // unknown ("") and unbuilt commits in between are stepped over
  CHECK(same(links[1], {5, 4, 4}));
  CHECK(same(links[2], {7, 5, 4})); // a run of identical builds shares its first one's samples

  CHECK(bisect::identical_builds({"A", "B", "A"}).empty()); // only neighbours among known builds are compared
  CHECK(bisect::identical_builds({std::nullopt, "", std::nullopt}).empty());
  CHECK(bisect::identical_builds({}).empty());
}

TEST_CASE("link_identical_builds gives the engine zero prior between identical builds", "[bisect]") {
  auto chain = candidates_of(6);
  auto links = bisect::identical_builds({"A", std::nullopt, std::nullopt, "A", "B", std::nullopt});
  bisect::link_identical_builds(chain, links);
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
