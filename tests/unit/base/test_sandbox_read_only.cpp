#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/sandbox.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace bisectd;

TEST_CASE("base::sandbox_argv binds read_only paths after the writable ones", "[base]") {
  test::TempDir dir;
  auto git_dir = dir.path() / ".git";
  std::filesystem::create_directories(git_dir);
  auto argv = base::sandbox_argv({.enabled = true, .bwrap = "bwrap", .hidden = {}},
                                 {.writable = {dir.path()}, .readable = {}, .read_only = {git_dir}}, {}, "", {"true"});
  auto writable = std::find(argv.begin(), argv.end(), "--bind");
  auto read_only = std::find(argv.begin(), argv.end(), git_dir.string());
  REQUIRE(writable != argv.end());
  REQUIRE(read_only != argv.end());
  CHECK(*(read_only - 1) == "--ro-bind");
  CHECK(read_only > writable); // a later mount covers the earlier one
}

TEST_CASE("a sandboxed command cannot change a read_only path inside its writable directory", "[base]") {
  if (auto why = base::sandbox_unusable("bwrap"); !why.empty()) {
    WARN("bwrap is not usable here, the sandbox is not exercised: " << why);
    return;
  }
  test::TempDir worktree;
  auto git_dir = worktree.path() / ".git";
  std::filesystem::create_directories(git_dir);
  REQUIRE(base::write_file_atomic(git_dir / "config", "[core]\n"));
  base::set_sandbox_policy({.enabled = true, .bwrap = "bwrap", .hidden = {}});

  base::Command cmd;
  // Each attempt prints what it managed to do; the read-only mount also refuses renaming or removing .git.
  cmd.argv = {"sh", "-c",
              "touch built && echo wrote; "
              "echo '[core] worktree = /victim' >> .git/config 2>/dev/null && echo appended; "
              "touch .git/new 2>/dev/null && echo created; "
              "mv .git moved 2>/dev/null && echo moved; "
              "rm -rf .git 2>/dev/null; test -d .git && echo kept"};
  cmd.cwd = worktree.path();
  cmd.sandbox = base::Sandbox{.writable = {worktree.path()}, .readable = {}, .read_only = {git_dir}};
  auto status = base::run(cmd);
  base::set_sandbox_policy({});
  REQUIRE(status);
  INFO(status->out << status->err);
  CHECK(status->out == "wrote\nkept\n");
  CHECK(std::filesystem::exists(worktree.path() / "built"));
  CHECK(base::read_file(git_dir / "config").value_or("") == "[core]\n");
  CHECK_FALSE(std::filesystem::exists(git_dir / "new"));
}
