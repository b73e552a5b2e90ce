// The command recipe's artifacts are what the commit's build left in the worktree (issue 29, item 1): copied into
// the store following no link (a symlink stays a symlink, its target unread), and a fifo or device refused.

#include "base/fs.hpp"
#include "kbuild/command_builder.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

kbuild::BuildRequest request(const test::TempDir& tmp, const std::string& script, const std::string& commit) {
  kbuild::BuildRequest req;
  req.tree = "demo";
  req.commit = commit;
  req.worktree = tmp.path() / "work";
  req.recipe.command = {"sh", "-c", script};
  req.recipe.artifacts = {"out"};
  req.recipe.timeout = 30s;
  return req;
}

} // namespace

TEST_CASE("CommandBuilder copies an artifact symlink as a link, never its target", "[kbuild]") {
  test::TempDir tmp;
  auto secret = tmp.write("secret/token", "SECRET-TOKEN-29\n");
  tmp.write("work/README", "x\n");
  kbuild::BuildStore store(tmp.path() / "builds");
  kbuild::CommandBuilder builder(store);
  auto built = builder.build(
    request(tmp, "mkdir -p out && echo bench > out/bench && ln -s " + secret.string() + " out/token", "c1"));
  REQUIRE(built);
  INFO(built->message);
  REQUIRE(built->outcome == kbuild::BuildOutcome::ok);
  auto link = built->artifact_dir / "out" / "token";
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(link)));
  CHECK(base::read_file(built->artifact_dir / "out" / "bench").value_or("") == "bench\n");
}

TEST_CASE("CommandBuilder refuses an artifact fifo: the build fails naming it", "[kbuild]") {
  test::TempDir tmp;
  tmp.write("work/README", "x\n");
  kbuild::BuildStore store(tmp.path() / "builds");
  kbuild::CommandBuilder builder(store);
  auto built = builder.build(request(tmp, "mkdir -p out && echo bench > out/bench && mkfifo out/pipe", "c2"));
  REQUIRE(built);
  INFO(built->message);
  CHECK(built->outcome == kbuild::BuildOutcome::failed);
  CHECK(built->message.find("out/pipe: refused: not a regular file") != std::string::npos);
  CHECK(built->artifact_dir.empty());
}
