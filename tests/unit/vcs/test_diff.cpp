#include "base/strings.hpp"
#include "git_fixture.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

using bisectd::ErrorCode;
using bisectd::test::GitFixture;
using bisectd::vcs::Repository;

TEST_CASE("vcs::Repository::changed_paths lists what a commit touched", "[vcs]") {
  GitFixture fixture;
  std::string root = fixture.commit("root", {{"keep.txt", "k\n"}, {"mod.txt", "1\n"}, {"gone.txt", "x\n"}});
  std::string change = fixture.commit("change", {{"mod.txt", "2\n"}, {"gone.txt", std::nullopt}, {"dir/new.c", "n\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  CHECK(repo->changed_paths(change).value() == std::vector<std::string>{"dir/new.c", "gone.txt", "mod.txt"});
  CHECK(repo->changed_paths(root).value() == std::vector<std::string>{"gone.txt", "keep.txt", "mod.txt"});
}

TEST_CASE("vcs::Repository::patch renders a mailable patch", "[vcs]") {
  GitFixture fixture;
  fixture.commit("root", {{"a.txt", "1\n"}});
  std::string sha = fixture.commit("a: bump\n\nBecause.\n\nSigned-off-by: T <t@example.org>\n", {{"a.txt", "2\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  auto text = repo->patch(sha);
  REQUIRE(text.has_value());
  CHECK(bisectd::base::starts_with(*text, "From " + sha + " Mon Sep 17 00:00:00 2001\n"));
  CHECK(text->find("From: Test Author <author@example.org>\n") != std::string::npos);
  CHECK(text->find("Date: Tue, 14 Nov 2023 23:15:20 +0100\n") != std::string::npos);
  CHECK(text->find("Subject: [PATCH] a: bump\n\nBecause.\n\nSigned-off-by: T <t@example.org>\n---\n") !=
        std::string::npos);
  CHECK(text->find(" a.txt | 2 +-") != std::string::npos);
  CHECK(text->find("diff --git a/a.txt b/a.txt") != std::string::npos);
  CHECK(text->find("\n-1\n+2\n") != std::string::npos);
}

TEST_CASE("vcs::Repository::revert_onto builds a detached revert commit", "[vcs]") {
  GitFixture fixture;
  fixture.commit("root", {{"f.txt", "one\ntwo\nthree\n"}, {"g.txt", "g\n"}});
  std::string culprit = fixture.commit("slow down", {{"f.txt", "one\nTWO\nthree\n"}});
  std::string later = fixture.commit("unrelated", {{"g.txt", "g2\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());

  auto reverted = repo->revert_onto(culprit, later);
  REQUIRE(reverted.has_value());
  auto info = repo->commit(*reverted);
  REQUIRE(info.has_value());
  CHECK(info->parents == std::vector<std::string>{later});
  CHECK(info->subject == "Revert \"slow down\"");
  CHECK(info->body == "This reverts commit " + culprit + ".");
  CHECK(fixture.git({"show", *reverted + ":f.txt"}) == "one\ntwo\nthree");
  CHECK(fixture.git({"show", *reverted + ":g.txt"}) == "g2");
  CHECK(fixture.git({"rev-parse", "master"}) == later); // no branch moved

  std::string clash = fixture.commit("touch the same line", {{"f.txt", "one\nTWO!\nthree\n"}});
  auto conflict = repo->revert_onto(culprit, clash);
  REQUIRE_FALSE(conflict.has_value());
  CHECK(conflict.error().code == ErrorCode::conflict);
  CHECK(conflict.error().message.find("conflict in f.txt") != std::string::npos);
}
