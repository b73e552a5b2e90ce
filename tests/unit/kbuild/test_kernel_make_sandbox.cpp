#include "base/fs.hpp"
#include "base/sandbox.hpp"
#include "kbuild/kernel_make.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

TEST_CASE("kbuild::run_make cannot change the worktree's git dir", "[kbuild]") {
  if (auto why = base::sandbox_unusable("bwrap"); !why.empty()) {
    WARN("bwrap is not usable here, the sandbox is not exercised: " << why);
    return;
  }
  test::TempDir tmp;
  kbuild::KernelMake make;
  make.worktree = tmp.path() / "linux";
  make.objdir = tmp.path() / "obj";
  make.log = tmp.path() / "make.log";
  make.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::filesystem::create_directories(make.worktree / ".git");
  std::filesystem::create_directories(make.objdir);
  REQUIRE(base::write_file_atomic(make.worktree / ".git" / "config", "[core]\n"));
  // A "make" that tries what a hostile Makefile could: redirect the daemon's next checkout.
  auto bin = make.worktree / "fake-bin"; // inside what the sandbox shows: /tmp (where a CI clone may be) is not
  std::filesystem::create_directories(bin);
  REQUIRE(base::write_file_atomic(bin / "make", "#!/bin/sh\ntouch built && echo wrote\n"
                                                "echo '[core] worktree = /victim' >> .git/config && echo appended\n"));
  std::filesystem::permissions(bin / "make", std::filesystem::perms::owner_all);
  make.env = {{"PATH", bin.string() + ":/usr/bin:/bin"}};
  base::set_sandbox_policy({.enabled = true, .bwrap = "bwrap", .hidden = {}});
  auto status = kbuild::run_make(make, {"all"});
  base::set_sandbox_policy({});
  REQUIRE(status);
  auto log = base::read_file(make.log).value_or("");
  INFO(log);
  CHECK(log.find("wrote") != std::string::npos); // make ran, in its writable worktree
  CHECK(log.find("appended") == std::string::npos);
  CHECK(base::read_file(make.worktree / ".git" / "config").value_or("") == "[core]\n");
}
