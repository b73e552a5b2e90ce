// A build leaves the worktree as it likes; the daemon's next checkout (unsandboxed, FORCE|REMOVE_UNTRACKED) must
// still act on the worktree and nothing else.
#include "git_fixture.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <optional>

using bisectd::test::GitFixture;
using bisectd::test::put_file;
using bisectd::test::slurp;
using bisectd::vcs::Repository;
namespace fs = std::filesystem;

namespace {

void append_to(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::app) << content;
}

// A directory outside the worktree that no checkout may change: one file, "mine".
struct HostileVictim {
  fs::path dir;
  explicit HostileVictim(const fs::path& where) : dir(where) { put_file(dir / "precious.txt", "mine\n"); }
  [[nodiscard]] std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      names.push_back(entry.path().lexically_relative(dir).string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  void check_untouched() const {
    CHECK(listing() == std::vector<std::string>{"precious.txt"});
    CHECK(slurp(dir / "precious.txt") == "mine\n");
  }
};

// origin with two commits, a mirror, and the worktree checked out at the first.
struct HostileSetup {
  GitFixture fixture;
  std::string first, second;
  std::optional<Repository> repo;
  fs::path wt;
  HostileSetup() {
    first = fixture.commit("first", {{"a.c", "int a;\n"},
                                     {"change.c", "int v = 1;\n"},
                                     {"keep.c", "int keep;\n"},
                                     {"src/deep.h", "#define D 1\n"},
                                     {".gitignore", "*.o\n"}});
    second = fixture.commit("second", {{"change.c", "int v = 2;\n"},
                                       {"src/deep.h", "#define D 2\n"},
                                       {"out/x", "tracked dir\n"},
                                       {"cfg", "tracked file\n"}});
    auto mirrored = Repository::mirror(fixture.origin().string(), fixture.dir() / "mirror.git");
    REQUIRE(mirrored.has_value());
    repo.emplace(std::move(*mirrored));
    wt = fixture.dir() / "wt";
    REQUIRE(repo->checkout(first, wt).has_value());
  }
  void check_second_checked_out() {
    CHECK(slurp(wt / "change.c") == "int v = 2;\n");
    CHECK(slurp(wt / "keep.c") == "int keep;\n");
    CHECK(slurp(wt / "src/deep.h") == "#define D 2\n");
    CHECK(slurp(wt / "out/x") == "tracked dir\n");
    CHECK(slurp(wt / "cfg") == "tracked file\n");
    CHECK(fixture.git({"rev-parse", "HEAD"}, wt) == second);
    CHECK(fixture.git({"status", "--porcelain"}, wt).empty());
  }
};

std::string hostile_checkout_error(HostileSetup& s, const std::string& sha) {
  auto result = s.repo->checkout(sha, s.wt);
  return result ? "" : result.error().message;
}

} // namespace

TEST_CASE("vcs::Repository::checkout ignores what a build wrote into the worktree's git dir", "[vcs]") {
  HostileSetup s;
  HostileVictim victim(s.fixture.dir() / "victim");
  auto git_dir = s.wt / ".git";
  // A git dir elsewhere whose config sends the workdir to the victim: reachable through include and commondir.
  auto other = s.fixture.dir() / "other.git";
  s.fixture.git({"init", "-q", "--bare", other.string()});
  s.fixture.git({"config", "--file", (other / "config").string(), "core.worktree", victim.dir.string()});
  s.fixture.git({"config", "--file", (other / "config").string(), "core.bare", "false"});
  auto planted = GENERATE(as<std::string>{}, "core.worktree", "include", "includeIf", "commondir", "logs/HEAD",
                          "objects/info", "core.bare");
  INFO("planted: " << planted);
  if (planted == "core.worktree") {
    append_to(git_dir / "config", "[core]\n\tworktree = " + victim.dir.string() + "\n");
  } else if (planted == "include") {
    append_to(git_dir / "config", "[include]\n\tpath = " + (other / "config").string() + "\n");
  } else if (planted == "includeIf") {
    append_to(git_dir / "config", "[includeIf \"gitdir:/\"]\n\tpath = " + (other / "config").string() + "\n");
  } else if (planted == "commondir") {
    put_file(git_dir / "commondir", other.string() + "\n");
  } else if (planted == "logs/HEAD") { // the reflog a checkout appends to
    fs::remove_all(git_dir / "logs");
    fs::create_directories(git_dir / "logs");
    fs::create_symlink(victim.dir / "precious.txt", git_dir / "logs/HEAD");
  } else if (planted == "objects/info") { // where the alternates file is written
    fs::remove_all(git_dir / "objects/info");
    fs::create_directory_symlink(victim.dir, git_dir / "objects/info");
  } else if (planted == "core.bare") {
    append_to(git_dir / "config", "[core]\n\tbare = true\n");
  }
  auto error = hostile_checkout_error(s, s.second);
  INFO(error);
  victim.check_untouched();
  REQUIRE(error.empty());
  s.check_second_checked_out();
}

TEST_CASE("vcs::Repository::checkout refuses a .git that redirects the repository", "[vcs]") {
  HostileSetup s;
  HostileVictim victim(s.fixture.dir() / "victim");
  auto other = s.fixture.dir() / "other.git";
  s.fixture.git({"init", "-q", "--bare", other.string()});
  s.fixture.git({"config", "--file", (other / "config").string(), "core.worktree", victim.dir.string()});
  s.fixture.git({"config", "--file", (other / "config").string(), "core.bare", "false"});
  fs::remove_all(s.wt / ".git");
  bool gitdir_file = GENERATE(true, false);
  if (gitdir_file) {
    put_file(s.wt / ".git", "gitdir: " + other.string() + "\n");
  } else {
    fs::create_directory_symlink(other, s.wt / ".git");
  }
  auto error = hostile_checkout_error(s, s.second);
  CHECK(error.find(".git is not a directory") != std::string::npos);
  CHECK(error.find(s.wt.string()) != std::string::npos);
  victim.check_untouched();
  CHECK(slurp(s.wt / "change.c") == "int v = 1;\n"); // nothing checked out anywhere
}

TEST_CASE("vcs::Repository::checkout never writes or deletes through a link a build planted", "[vcs]") {
  HostileSetup s;
  HostileVictim victim(s.fixture.dir() / "victim");
  auto planted = GENERATE(as<std::string>{}, "untracked link where a directory comes",
                          "untracked link where a file comes", "untracked link to a directory", "tracked file replaced",
                          "unchanged file replaced", "tracked directory replaced", "ignored link",
                          "hard link as a tracked file", "hard link as an unchanged file", "hard link where a file comes");
  INFO("planted: " << planted);
  if (planted == "untracked link where a directory comes") {
    fs::create_directory_symlink(victim.dir, s.wt / "out"); // `second` tracks out/x
  } else if (planted == "untracked link where a file comes") {
    fs::create_symlink(victim.dir / "precious.txt", s.wt / "cfg"); // `second` tracks cfg
  } else if (planted == "untracked link to a directory") {
    fs::create_directory_symlink(victim.dir, s.wt / "junk"); // REMOVE_UNTRACKED
  } else if (planted == "tracked file replaced") {
    fs::remove(s.wt / "change.c");
    fs::create_symlink(victim.dir / "precious.txt", s.wt / "change.c");
  } else if (planted == "unchanged file replaced") {
    fs::remove(s.wt / "keep.c");
    fs::create_symlink(victim.dir / "precious.txt", s.wt / "keep.c");
  } else if (planted == "tracked directory replaced") {
    fs::remove_all(s.wt / "src");
    fs::create_directory_symlink(victim.dir, s.wt / "src");
  } else if (planted == "ignored link") {
    fs::create_symlink(victim.dir / "precious.txt", s.wt / "victim.o");
  } else if (planted == "hard link as a tracked file") { // unsandboxed; in bwrap the worktree is its own mount
    fs::remove(s.wt / "change.c");
    fs::create_hard_link(victim.dir / "precious.txt", s.wt / "change.c");
  } else if (planted == "hard link as an unchanged file") {
    fs::remove(s.wt / "keep.c");
    fs::create_hard_link(victim.dir / "precious.txt", s.wt / "keep.c");
  } else if (planted == "hard link where a file comes") {
    fs::create_hard_link(victim.dir / "precious.txt", s.wt / "cfg");
  }
  auto error = hostile_checkout_error(s, s.second);
  INFO(error);
  victim.check_untouched();
  REQUIRE(error.empty());
  s.check_second_checked_out();
  for (const char* name : {"out", "cfg", "junk", "change.c", "keep.c", "src", "victim.o"}) {
    CHECK_FALSE(fs::is_symlink(s.wt / name));
  }
}

TEST_CASE("vcs::Repository::checkout keeps the links a commit tracks", "[vcs]") {
  GitFixture fixture;
  HostileVictim victim(fixture.dir() / "victim");
  fixture.commit("first", {{"target.c", "int t;\n"}});
  fs::create_symlink("target.c", fixture.origin() / "link.c");
  fs::create_directory_symlink(victim.dir, fixture.origin() / "away");
  std::string second = fixture.commit("links", {{"other.c", "int o;\n"}});
  // A commit replaces its own link out of the tree with a directory: the checkout must not write through it.
  fs::remove(fixture.origin() / "away");
  std::string third = fixture.commit("away is a directory", {{"away/file", "inside\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  fs::path wt = fixture.dir() / "wt";
  REQUIRE(repo->checkout(second, wt).has_value());
  REQUIRE(fs::is_symlink(wt / "link.c"));
  REQUIRE(repo->checkout(second, wt).has_value()); // the sweep before it leaves tracked links alone
  CHECK(fs::read_symlink(wt / "link.c") == "target.c");
  CHECK(fs::read_symlink(wt / "away") == victim.dir);

  fs::remove(wt / "link.c"); // a build points the tracked link elsewhere
  fs::create_symlink(victim.dir / "precious.txt", wt / "link.c");
  REQUIRE(repo->checkout(third, wt).has_value());
  CHECK(fs::read_symlink(wt / "link.c") == "target.c");
  CHECK_FALSE(fs::is_symlink(wt / "away"));
  CHECK(slurp(wt / "away/file") == "inside\n");
  victim.check_untouched();
  CHECK(fixture.git({"status", "--porcelain"}, wt).empty());
}
