#include "kbuild/kernel_builder.hpp"
#include "kbuild/kernel_failure.hpp"
#include "kbuild/kernel_make.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace bisectd;

namespace {

base::ExitStatus exited(int code) {
  base::ExitStatus status;
  status.code = code;
  return status;
}

bool has(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

} // namespace

TEST_CASE("kbuild::classify_make_failure tells the commit from the host", "[kernel]") {
  CHECK(kbuild::classify_make_failure(exited(2), "mm/memory.c:10:1: error: expected ';'\n") ==
        kbuild::BuildOutcome::failed);
  CHECK(kbuild::classify_make_failure(exited(2), "cc1: fatal error: No space left on device\n") ==
        kbuild::BuildOutcome::infra);
  CHECK(kbuild::classify_make_failure(exited(2), "gcc: fatal error: Killed signal terminated program cc1\n") ==
        kbuild::BuildOutcome::infra);
  auto timed_out = exited(-1);
  timed_out.timed_out = true;
  CHECK(kbuild::classify_make_failure(timed_out, "") == kbuild::BuildOutcome::infra);
  auto killed = exited(-1);
  killed.signal = 9;
  CHECK(kbuild::classify_make_failure(killed, "") == kbuild::BuildOutcome::infra);
}

TEST_CASE("kbuild::first_error_line finds the compiler error", "[kernel]") {
  std::string log = "  CC      kernel/fork.o\nkernel/fork.c: In function 'f':\n"
                    "kernel/fork.c:12:3: error: 'x' undeclared\nmake[2]: *** [scripts/Makefile.build:250] Error 1\n";
  CHECK(kbuild::first_error_line(log) == "kernel/fork.c:12:3: error: 'x' undeclared");
  CHECK(kbuild::first_error_line("line one\nlast words\n\n") == "last words");
  CHECK(kbuild::first_error_line(std::string(1000, 'a') + ": error: x").size() == 300);
}

TEST_CASE("kbuild::make_argv builds out of tree with the stamp and compiler", "[kernel]") {
  kbuild::KernelMake make;
  make.worktree = "/src/linux";
  make.objdir = "/build/linux-abc";
  make.compiler = "ccache gcc";
  make.localversion = "-g0123456789ab";
  auto argv = kbuild::make_argv(make, {"bzImage"}, 2);
  CHECK(argv.front() == "make");
  CHECK(argv.back() == "bzImage");
  for (const char* arg : {"-C", "/src/linux", "O=/build/linux-abc", "ARCH=x86_64", "CC=ccache gcc",
                          "LOCALVERSION=-g0123456789ab", "-j2"}) {
    INFO(arg);
    CHECK(has(argv, arg));
  }
  CHECK(std::none_of(argv.begin(), argv.end(), [](const auto& a) { return a.starts_with("KCFLAGS="); }));
  make.kcflags = "-falign-functions=64";
  CHECK(has(kbuild::make_argv(make, {"bzImage"}, 0), "KCFLAGS=-falign-functions=64"));
  CHECK(std::none_of(argv.begin(), argv.end(), [](const auto& a) { return a == "-j0"; }));
}

TEST_CASE("kbuild::kernel_arch and ccache_env", "[kernel]") {
  auto arch = kbuild::kernel_arch("x86_64");
  REQUIRE(arch);
  CHECK(arch->image_path == "arch/x86/boot/bzImage");
  auto bad = kbuild::kernel_arch("sparc");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::invalid_config);
  auto env = kbuild::ccache_env("/data/worktrees/linux", "/data/kbuild/linux-abc", "/cache/bisectd");
  CHECK(env.at("CCACHE_DIR") == "/cache/bisectd/ccache");
  CHECK(env.at("CCACHE_BASEDIR") == "/data");
  CHECK_FALSE(kbuild::ccache_env("/a/x", "/b/y", "/c").contains("CCACHE_BASEDIR"));
}

TEST_CASE("kbuild::KernelBuilder reuses a stored build and rejects other recipes", "[kernel]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path() / "store");
  kbuild::KernelBuilder builder(store, tmp.path() / "kbuild");
  kbuild::BuildRequest request;
  request.tree = "linux";
  request.commit = "0123456789abcdef0123456789abcdef01234567";
  request.worktree = tmp.path() / "src";
  tmp.write("src/Makefile", "# not a real kernel: make must never run\n");
  request.recipe.kind = kbuild::RecipeKind::kernel;
  request.recipe.config = "tinyconfig";
  auto hash = request.recipe.hash();
  REQUIRE(hash);
  auto build_dir = builder.build_dir_for("linux", *hash, request.worktree);
  CHECK(build_dir.parent_path() == tmp.path() / "kbuild");
  CHECK(build_dir.filename().string().starts_with("linux-" + *hash + "-"));
  CHECK(builder.build_dir_for("linux", *hash, tmp.path() / "other") != build_dir);

  auto dir = store.prepare(request.commit, *hash);
  REQUIRE(dir);
  kbuild::BuildResult stored;
  stored.outcome = kbuild::BuildOutcome::failed;
  stored.log_path = *dir / "build.log";
  stored.message = "kernel/fork.c:1:1: error: x";
  REQUIRE(store.save(request.commit, *hash, stored));
  auto result = builder.build(request);
  REQUIRE(result);
  CHECK(result->reused);
  CHECK(result->outcome == kbuild::BuildOutcome::failed);
  CHECK_FALSE(std::filesystem::exists(build_dir));

  request.recipe.kind = kbuild::RecipeKind::command;
  auto wrong = builder.build(request);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code == ErrorCode::invalid_config);
  request.recipe.kind = kbuild::RecipeKind::kernel;
  request.recipe.config = "rm -rf /";
  CHECK_FALSE(builder.build(request));
}
