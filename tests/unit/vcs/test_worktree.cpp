#include "git_fixture.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>


using bisectd::test::GitFixture;
using bisectd::test::put_file;
using bisectd::test::slurp;
using bisectd::vcs::Repository;
namespace fs = std::filesystem;

namespace {

const auto k_old_time = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);

} // namespace

TEST_CASE("vcs::Repository::checkout reuses a worktree incrementally", "[vcs]") {
  GitFixture fixture;
  std::string first = fixture.commit("first", {{"keep.c", "int keep;\n"},
                                               {"change.c", "int v = 1;\n"},
                                               {"gone.c", "int gone;\n"},
                                               {"src/deep.h", "#define D 1\n"},
                                               {".gitignore", "*.o\nbuild/\n"}});
  std::string second = fixture.commit("second", {{"change.c", "int v = 2;\n"}, {"gone.c", std::nullopt}});
  auto mirror_dir = fixture.dir() / "mirror.git";
  auto repo = Repository::mirror(fixture.origin().string(), mirror_dir);
  REQUIRE(repo.has_value());
  fs::path wt = fixture.dir() / "wt";

  REQUIRE(repo->checkout(first, wt).has_value());
  CHECK(slurp(wt / "change.c") == "int v = 1;\n");
  CHECK(slurp(wt / "src/deep.h") == "#define D 1\n");
  CHECK(fixture.git({"rev-parse", "HEAD"}, wt) == first);

  // Age the unchanged files so a rewrite would show; leave build outputs behind.
  fs::last_write_time(wt / "keep.c", k_old_time);
  fs::last_write_time(wt / "src/deep.h", k_old_time);
  auto keep_mtime = fs::last_write_time(wt / "keep.c");
  put_file(wt / "keep.o", "object");        // ignored: stays for incremental builds
  put_file(wt / "build/out.bin", "binary"); // ignored directory: stays
  put_file(wt / "stray.txt", "untracked");  // untracked: removed
  put_file(wt / "change.c", "int v = 99; /* edited by the build */\n");

  REQUIRE(repo->checkout(second, wt).has_value());
  CHECK(fs::last_write_time(wt / "keep.c") == keep_mtime);
  CHECK(fs::last_write_time(wt / "src/deep.h") == keep_mtime);
  CHECK(slurp(wt / "change.c") == "int v = 2;\n");
  CHECK_FALSE(fs::exists(wt / "gone.c"));
  CHECK_FALSE(fs::exists(wt / "stray.txt"));
  CHECK(fs::exists(wt / "keep.o"));
  CHECK(fs::exists(wt / "build/out.bin"));
  CHECK(fixture.git({"rev-parse", "HEAD"}, wt) == second);
  CHECK(fixture.git({"status", "--porcelain"}, wt).empty());

  // And back: the deleted file returns, the unchanged one is still untouched.
  REQUIRE(repo->checkout(first, wt).has_value());
  CHECK(slurp(wt / "gone.c") == "int gone;\n");
  CHECK(fs::last_write_time(wt / "keep.c") == keep_mtime);
}

TEST_CASE("vcs::Repository::checkout is not blocked by build outputs in the way", "[vcs]") {
  GitFixture fixture;
  std::string first = fixture.commit("first", {{"a.c", "a\n"}, {".gitignore", "gen/\n"}});
  std::string second = fixture.commit("second", {{"gen", "now a tracked file\n"}, {"out/x", "tracked dir\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  fs::path wt = fixture.dir() / "wt";
  REQUIRE(repo->checkout(first, wt).has_value());
  put_file(wt / "gen/table.c", "generated"); // ignored directory where `second` tracks a file
  put_file(wt / "out", "untracked file where `second` tracks a directory");
  auto result = repo->checkout(second, wt);
  INFO((result ? std::string("ok") : result.error().message));
  REQUIRE(result.has_value());
  CHECK(slurp(wt / "gen") == "now a tracked file\n");
  CHECK(slurp(wt / "out/x") == "tracked dir\n");
}

TEST_CASE("vcs::Repository::checkout refuses a foreign non-empty directory", "[vcs]") {
  GitFixture fixture;
  std::string first = fixture.commit("first", {{"a.c", "a\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  fs::path wt = fixture.dir() / "precious";
  put_file(wt / "notes.txt", "mine");
  auto result = repo->checkout(first, wt);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().message.find("precious") != std::string::npos);
  CHECK(slurp(wt / "notes.txt") == "mine");
}

TEST_CASE("vcs::Repository::checkout survives a HEAD its objects no longer have", "[vcs]") {
  // The daemon's revert commits live only in the mirror; a re-cloned mirror (tree removed and added again) does
  // not have them, but the kept worktree's HEAD may still name one.
  GitFixture fixture;
  std::string first = fixture.commit("first", {{"keep.c", "int keep;\n"}, {"change.c", "int v = 1;\n"}});
  std::string second = fixture.commit("second", {{"change.c", "int v = 2;\n"}});
  fs::path wt = fixture.dir() / "wt";
  {
    auto old_mirror = Repository::mirror(fixture.origin().string(), fixture.dir() / "old.git");
    REQUIRE(old_mirror.has_value());
    auto only_in_old = old_mirror->revert_onto(second, second);
    REQUIRE(only_in_old.has_value());
    REQUIRE(old_mirror->checkout(*only_in_old, wt).has_value());
    CHECK(slurp(wt / "change.c") == "int v = 1;\n");
  }
  fs::last_write_time(wt / "keep.c", k_old_time);
  auto keep_mtime = fs::last_write_time(wt / "keep.c");
  auto new_mirror = Repository::mirror(fixture.origin().string(), fixture.dir() / "new.git");
  REQUIRE(new_mirror.has_value());
  auto result = new_mirror->checkout(second, wt);
  INFO((result ? std::string("ok") : result.error().message));
  REQUIRE(result.has_value());
  CHECK(slurp(wt / "change.c") == "int v = 2;\n");
  CHECK(fs::last_write_time(wt / "keep.c") == keep_mtime); // still incremental
  CHECK(fixture.git({"rev-parse", "HEAD"}, wt) == second);
}
