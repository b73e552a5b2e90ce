#include "git_fixture.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

using bisectd::ErrorCode;
using bisectd::test::GitFixture;
using bisectd::vcs::Repository;

TEST_CASE("vcs::Repository::mirror clones, fetches new commits and prunes", "[vcs]") {
  GitFixture fixture;
  std::string first = fixture.commit("first", {{"a.txt", "1\n"}});
  fixture.git({"branch", "doomed"});
  fixture.git({"tag", "v1"});
  auto mirror_dir = fixture.dir() / "mirror.git";

  SECTION("plain local path") {
    auto repo = Repository::mirror(fixture.origin().string(), mirror_dir);
    REQUIRE(repo.has_value());
    CHECK(repo->resolve("master").value() == first);
    CHECK(repo->resolve("v1").value() == first);
    CHECK(std::filesystem::exists(mirror_dir / "objects" / "info" / "commit-graph")); // written by fetch
    CHECK(repo->branch_heads().value() == std::map<std::string, std::string>{{"doomed", first}, {"master", first}});

    std::string second = fixture.commit("second", {{"a.txt", "2\n"}});
    fixture.git({"branch", "-D", "doomed"});
    REQUIRE(repo->fetch().has_value());
    CHECK(repo->resolve("master").value() == second);
    CHECK(repo->branch_heads().value() == std::map<std::string, std::string>{{"master", second}});
    CHECK(fixture.git({"rev-parse", "HEAD"}, mirror_dir) == second); // git sees a mirror with HEAD → master
  }
  SECTION("into an existing empty directory") {
    std::filesystem::create_directories(mirror_dir);
    auto repo = Repository::mirror(fixture.origin().string(), mirror_dir);
    REQUIRE(repo.has_value());
    CHECK(repo->resolve("master").value() == first);
  }
  SECTION("file:// URL, then reopened by a second mirror() call") {
    std::string url = "file://" + fixture.origin().string();
    REQUIRE(Repository::mirror(url, mirror_dir).has_value());
    std::string second = fixture.commit("second", {{"a.txt", "2\n"}});
    auto again = Repository::mirror(url, mirror_dir);
    REQUIRE(again.has_value());
    CHECK(again->resolve("master").value() == second);
    CHECK(fixture.git({"config", "remote.origin.mirror"}, mirror_dir) == "true");
  }
}

TEST_CASE("vcs::Repository::mirror refuses bad URLs and leaves nothing behind", "[vcs]") {
  GitFixture fixture;
  auto mirror_dir = fixture.dir() / "mirror.git";
  SECTION("unsafe URL") {
    auto repo = Repository::mirror("/tmp/a b", mirror_dir);
    REQUIRE_FALSE(repo.has_value());
    CHECK(repo.error().code == ErrorCode::invalid_input);
  }
  SECTION("missing repository") {
    auto repo = Repository::mirror((fixture.dir() / "nowhere").string(), mirror_dir);
    REQUIRE_FALSE(repo.has_value());
    CHECK(repo.error().message.find("nowhere") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(mirror_dir));
}

TEST_CASE("vcs::Repository::open and resolve", "[vcs]") {
  auto& [fixture, h] = bisectd::test::shared_history();
  auto repo = Repository::open(fixture.origin() / ".git");
  REQUIRE(repo.has_value());
  CHECK(repo->resolve("master").value() == h.d);
  CHECK(repo->resolve("topic").value() == h.t2);
  CHECK(repo->resolve(h.c.substr(0, 10)).value() == h.c);
  CHECK(repo->resolve("HEAD~1").value() == h.m);
  CHECK(repo->resolve("master~1^2").value() == h.t2);
  CHECK(repo->resolve(h.a).value() == h.a);

  auto unknown = repo->resolve("no-such-branch");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == ErrorCode::not_found);
  CHECK(unknown.error().message.find("'no-such-branch'") != std::string::npos);
  CHECK_FALSE(repo->resolve("--all").has_value());
  CHECK_FALSE(repo->resolve("").has_value());

  auto missing = Repository::open(fixture.dir() / "not-a-repo");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("not-a-repo") != std::string::npos);
}
