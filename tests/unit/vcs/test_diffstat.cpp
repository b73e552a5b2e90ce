// vcs::Repository::diffstat: what a report shows of the culprit's change (`git show --stat`'s lines).
#include "git_fixture.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

using bisectd::test::GitFixture;
using bisectd::vcs::Repository;

TEST_CASE("vcs::Repository::diffstat: one line per file, renames as one, and git's summary", "[vcs][diffstat]") {
  GitFixture fixture;
  std::string moved(40, 'm');
  for (int i = 0; i < 20; ++i) {
    moved += "\nline " + std::to_string(i);
  }
  fixture.commit("root", {{"mm/memcontrol.c", "a\nb\nc\n"}, {"gone.txt", "x\ny\n"}, {"old/name.c", moved + "\n"}});
  std::string change = fixture.commit("mm: change", {{"mm/memcontrol.c", "a\nB\nc\nd\n"},
                                                     {"gone.txt", std::nullopt},
                                                     {"old/name.c", std::nullopt},
                                                     {"new/name.c", moved + "\n"},
                                                     {"include/linux/memcontrol.h", "int f(void);\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  auto stat = repo->diffstat(change);
  REQUIRE(stat.has_value());
  INFO(*stat);
  CHECK(stat->find(" mm/memcontrol.c ") != std::string::npos);
  CHECK(stat->find("| 3 ++-\n") != std::string::npos); // B replaces b, d added
  CHECK(stat->find(" gone.txt ") != std::string::npos);
  CHECK(stat->find(" include/linux/memcontrol.h ") != std::string::npos);
  CHECK(stat->find(" old/name.c => new/name.c ") != std::string::npos); // a rename is one line, no change
  CHECK(stat->find(" 4 files changed, 3 insertions(+), 3 deletions(-)\n") != std::string::npos);
  CHECK(stat->find("diff --git") == std::string::npos); // the stat only, not the patch
  // git itself agrees on the summary line.
  std::string git_stat = fixture.git({"show", "--stat", "--format=", "-M", change});
  CHECK(stat->find(git_stat.substr(git_stat.rfind('\n') + 1)) != std::string::npos);

  auto missing = repo->diffstat("0123456789012345678901234567890123456789");
  CHECK_FALSE(missing.has_value());
}
