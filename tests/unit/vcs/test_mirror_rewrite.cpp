// A force-pushed branch: the mirror's fetch moves the branch and prunes no object, so the commits the rewrite
// dropped stay readable (a bisection started on the old history finishes on them), even after the origin itself
// collected them; the merge base of the old and new heads is where the new history leaves the old one.
#include "git_fixture.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

using bisectd::test::GitFixture;
using bisectd::vcs::Repository;

TEST_CASE("vcs::Repository: a rewritten branch's dropped commits stay in the mirror", "[vcs]") {
  GitFixture fixture;
  std::string base = fixture.commit("base", {{"a.txt", "1\n"}});
  std::string dropped = fixture.commit("dropped", {{"a.txt", "2\n"}});
  std::string old_head = fixture.commit("old head", {{"b.txt", "old\n"}});
  auto mirror_dir = fixture.dir() / "mirror.git";
  auto repo = Repository::mirror(fixture.origin().string(), mirror_dir);
  REQUIRE(repo.has_value());

  fixture.git({"reset", "-q", "--hard", base});
  std::string new_head = fixture.commit("rewritten", {{"b.txt", "new\n"}});
  fixture.git({"reflog", "expire", "--expire=now", "--all"});
  fixture.git({"gc", "-q", "--prune=now"}); // the origin forgets the old history
  REQUIRE(repo->fetch().has_value());

  CHECK(repo->resolve("master").value() == new_head);
  CHECK(repo->commit(old_head).value().subject == "old head");
  CHECK(repo->commit(dropped).value().subject == "dropped");
  CHECK(repo->is_ancestor(old_head, new_head).value() == false);
  CHECK(repo->merge_base(old_head, new_head).value() == base);
  CHECK(repo->checkout(old_head, fixture.dir() / "worktree").has_value());
  CHECK(bisectd::test::slurp(fixture.dir() / "worktree" / "b.txt") == "old\n");
}
