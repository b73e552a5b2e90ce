#include "base/fs.hpp"
#include "base/process.hpp"
#include "kbuild/command_builder.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

const std::string k_good_c = "#include <stdio.h>\nint main(void) { puts(\"bench.ops_per_sec: 42\"); return 0; }\n";
const std::string k_bad_c = "int main(void) { return 0 }\n";

// A git-less worktree with main.c, and a store beside it.
struct Fixture {
  test::TempDir tmp;
  std::filesystem::path worktree = tmp.path() / "work";
  kbuild::BuildStore store{tmp.path() / "builds"};
  kbuild::CommandBuilder builder{store};

  explicit Fixture(const std::string& source) {
    REQUIRE(base::find_program("cc"));
    tmp.write("work/main.c", source);
  }

  kbuild::BuildRequest request(std::string commit = "c0ffee") const {
    kbuild::BuildRequest req;
    req.tree = "demo";
    req.commit = std::move(commit);
    req.worktree = worktree;
    req.recipe.command = {"cc", "-O0", "-o", "bench", "main.c"};
    req.recipe.artifacts = {"bench"};
    req.recipe.timeout = 30s;
    return req;
  }
};

} // namespace

TEST_CASE("kbuild::CommandBuilder builds, keeps the artifact and never rebuilds", "[kbuild]") {
  Fixture fx(k_good_c);
  auto built = fx.builder.build(fx.request());
  REQUIRE(built);
  CHECK(built->outcome == kbuild::BuildOutcome::ok);
  CHECK_FALSE(built->reused);
  CHECK(built->seconds > 0);
  CHECK(std::filesystem::exists(built->log_path));
  auto bench = built->artifact_dir / "bench";
  REQUIRE(std::filesystem::exists(bench));
  base::Command run_bench;
  run_bench.argv = {bench.string()};
  auto ran = base::run(run_bench);
  REQUIRE(ran);
  CHECK(ran->out == "bench.ops_per_sec: 42\n");

  // The source is gone: a second build can only succeed by reuse.
  std::filesystem::remove(fx.worktree / "main.c");
  auto again = fx.builder.build(fx.request());
  REQUIRE(again);
  CHECK(again->outcome == kbuild::BuildOutcome::ok);
  CHECK(again->reused);
  CHECK(again->seconds == 0);
  CHECK(again->artifact_dir == built->artifact_dir);
}

TEST_CASE("kbuild::CommandBuilder stores a failing build and does not retry it", "[kbuild]") {
  Fixture fx(k_bad_c);
  auto built = fx.builder.build(fx.request());
  REQUIRE(built);
  CHECK(built->outcome == kbuild::BuildOutcome::failed);
  CHECK_FALSE(built->message.empty());
  CHECK(built->message.find('\n') == std::string::npos);
  CHECK(built->artifact_dir.empty());
  auto log = base::read_file(built->log_path);
  REQUIRE(log);
  CHECK_THAT(*log, Catch::Contains("error"));

  fx.tmp.write("work/main.c", k_good_c); // fixed in the worktree, but the commit is what it is
  auto again = fx.builder.build(fx.request());
  REQUIRE(again);
  CHECK(again->outcome == kbuild::BuildOutcome::failed);
  CHECK(again->reused);
  CHECK(again->message == built->message);
}

TEST_CASE("kbuild::CommandBuilder uses the last log line of a failed command as message", "[kbuild]") {
  Fixture fx(k_good_c);
  auto req = fx.request();
  req.recipe.command = {"sh", "-c", "echo first; echo 'the real reason' >&2; echo; exit 2"};
  auto built = fx.builder.build(req);
  REQUIRE(built);
  CHECK(built->outcome == kbuild::BuildOutcome::failed);
  CHECK(built->message == "the real reason");

  req.recipe.command = {"false"};
  auto silent = fx.builder.build(req);
  REQUIRE(silent);
  CHECK(silent->outcome == kbuild::BuildOutcome::failed);
  CHECK(silent->message == "build exit 1");
}

TEST_CASE("kbuild::CommandBuilder fails a build whose artifact is missing", "[kbuild]") {
  Fixture fx(k_good_c);
  auto req = fx.request();
  req.recipe.artifacts = {"bench", "nope"};
  auto built = fx.builder.build(req);
  REQUIRE(built);
  CHECK(built->outcome == kbuild::BuildOutcome::failed);
  CHECK_THAT(built->message, Catch::Contains("'nope'"));
  CHECK(fx.store.lookup(req.commit, *req.recipe.hash()));
}

TEST_CASE("kbuild::CommandBuilder runs ./script from the worktree with env and copies directories", "[kbuild]") {
  Fixture fx(k_good_c);
  fx.tmp.write("work/build.sh",
               "#!/bin/sh\nset -e\ntest \"$OUT\" = out\nmkdir -p \"$OUT/bin\"\n"
               "cc -o \"$OUT/bin/bench\" main.c\necho built\n",
               true);
  auto req = fx.request();
  req.recipe.command = {"./build.sh"};
  req.recipe.artifacts = {"out"};
  req.recipe.env = {{"OUT", "out"}};
  auto built = fx.builder.build(req);
  REQUIRE(built);
  INFO(built->message);
  CHECK(built->outcome == kbuild::BuildOutcome::ok);
  CHECK(std::filesystem::exists(built->artifact_dir / "out" / "bin" / "bench"));
}

TEST_CASE("kbuild::CommandBuilder reports timeout, cancel and spawn failure as infra, unstored", "[kbuild]") {
  Fixture fx(k_good_c);
  auto req = fx.request();
  SECTION("timeout") {
    req.recipe.command = {"sleep", "10"};
    req.recipe.timeout = 1s;
    auto built = fx.builder.build(req);
    REQUIRE(built);
    CHECK(built->outcome == kbuild::BuildOutcome::infra);
    CHECK_THAT(built->message, Catch::Contains("timed out"));
  }
  SECTION("cancel") {
    std::atomic<bool> cancel{true};
    req.cancel = &cancel;
    req.recipe.command = {"sleep", "10"};
    auto built = fx.builder.build(req);
    REQUIRE(built);
    CHECK(built->outcome == kbuild::BuildOutcome::infra);
    CHECK(built->message == "build cancelled");
  }
  SECTION("spawn failure") {
    req.recipe.command = {"./no-such-build-script"};
    auto built = fx.builder.build(req);
    REQUIRE(built);
    CHECK(built->outcome == kbuild::BuildOutcome::infra);
    CHECK_THAT(built->message, Catch::Contains("no-such-build-script"));
  }
  CHECK_FALSE(fx.store.lookup(req.commit, *req.recipe.hash()));
  // Infra is retried: the next attempt really builds.
  auto retry = fx.builder.build(fx.request());
  REQUIRE(retry);
  CHECK(retry->outcome == kbuild::BuildOutcome::ok);
  CHECK_FALSE(retry->reused);
}

TEST_CASE("kbuild::disk_nearly_full: under min(64 MiB, 1 %) left", "[kbuild]") {
  constexpr std::uintmax_t mib = 1024 * 1024;
  CHECK(kbuild::disk_nearly_full(0, 64 * mib));
  CHECK(kbuild::disk_nearly_full(600 * 1024, 64 * mib)); // under 1 % of a small file system
  CHECK_FALSE(kbuild::disk_nearly_full(1 * mib, 64 * mib));
  CHECK(kbuild::disk_nearly_full(63 * mib, 1024 * 1024 * mib)); // a large disk: the 64 MiB floor
  CHECK_FALSE(kbuild::disk_nearly_full(65 * mib, 1024 * 1024 * mib));
  CHECK_FALSE(kbuild::disk_nearly_full(0, 0)); // a file system that reports no size (proc-like): never "full"
}

TEST_CASE("kbuild::CommandBuilder rejects invalid recipes", "[kbuild]") {
  Fixture fx(k_good_c);
  auto req = fx.request();
  SECTION("kernel recipe") { req.recipe.kind = kbuild::RecipeKind::kernel; }
  SECTION("empty command") { req.recipe.command.clear(); }
  SECTION("artifact outside the worktree") { req.recipe.artifacts = {"../../etc/passwd"}; }
  SECTION("absolute artifact") { req.recipe.artifacts = {"/etc/passwd"}; }
  auto built = fx.builder.build(req);
  REQUIRE_FALSE(built);
  CHECK(built.error().code == ErrorCode::invalid_config);
}
