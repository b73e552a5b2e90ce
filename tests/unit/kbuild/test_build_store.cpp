#include "base/fs.hpp"
#include "kbuild/build_store.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <thread>

using namespace bisectd;

namespace {

const std::string k_commit = "0123456789abcdef0123456789abcdef01234567";
const std::string k_hash = "a1b2c3d4e5f60718";

} // namespace

TEST_CASE("kbuild::BuildStore round-trips a successful build", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path() / "builds");
  CHECK_FALSE(store.lookup(k_commit, k_hash));

  auto dir = store.prepare(k_commit, k_hash);
  REQUIRE(dir);
  CHECK(*dir == store.dir_for(k_commit, k_hash));
  CHECK(std::filesystem::is_directory(*dir));
  kbuild::BuildResult result;
  result.outcome = kbuild::BuildOutcome::ok;
  result.artifact_dir = *dir / "artifacts";
  result.log_path = *dir / "build.log";
  result.kernel_release = "6.12.0-rc1-00042-gabcdef";
  result.seconds = 12.5;
  REQUIRE(store.save(k_commit, k_hash, result));

  auto stored = store.lookup(k_commit, k_hash);
  REQUIRE(stored);
  CHECK(stored->outcome == kbuild::BuildOutcome::ok);
  CHECK(stored->artifact_dir == result.artifact_dir);
  CHECK(stored->log_path == result.log_path);
  CHECK(stored->kernel_release == result.kernel_release);
  CHECK(stored->seconds == Approx(12.5));
  CHECK(stored->message.empty());
  CHECK(stored->reused);
  // Another commit or recipe is not affected.
  CHECK_FALSE(store.lookup("ffff", k_hash));
  CHECK_FALSE(store.lookup(k_commit, "ffff"));
}

TEST_CASE("kbuild::BuildStore keeps paths relative so the store can move", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path() / "old");
  auto dir = store.prepare(k_commit, k_hash);
  REQUIRE(dir);
  kbuild::BuildResult result;
  result.artifact_dir = *dir / "artifacts";
  result.log_path = *dir / "build.log";
  REQUIRE(store.save(k_commit, k_hash, result));

  std::filesystem::rename(tmp.path() / "old", tmp.path() / "new");
  kbuild::BuildStore moved(tmp.path() / "new");
  auto stored = moved.lookup(k_commit, k_hash);
  REQUIRE(stored);
  CHECK(stored->artifact_dir == moved.dir_for(k_commit, k_hash) / "artifacts");
  CHECK(stored->log_path == moved.dir_for(k_commit, k_hash) / "build.log");
}

TEST_CASE("kbuild::BuildStore stores failures and never stores infra", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path());
  kbuild::BuildResult failed;
  failed.outcome = kbuild::BuildOutcome::failed;
  failed.message = "main.c:3: error: expected ';'\nsecond line";
  REQUIRE(store.save(k_commit, k_hash, failed));
  auto stored = store.lookup(k_commit, k_hash);
  REQUIRE(stored);
  CHECK(stored->outcome == kbuild::BuildOutcome::failed);
  CHECK(stored->message == "main.c:3: error: expected ';' second line");
  CHECK(stored->artifact_dir.empty());

  kbuild::BuildResult infra;
  infra.outcome = kbuild::BuildOutcome::infra;
  REQUIRE(store.save("beef", k_hash, infra));
  CHECK_FALSE(store.lookup("beef", k_hash));
}

TEST_CASE("kbuild::BuildStore ignores a build interrupted before its result file", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path());
  // A crash mid-build: directory, log and half the artifacts exist, the result file does not.
  auto dir = store.prepare(k_commit, k_hash);
  REQUIRE(dir);
  tmp.write((std::filesystem::relative(*dir, tmp.path()) / "build.log").string(), "CC main.o\n");
  tmp.write((std::filesystem::relative(*dir, tmp.path()) / "artifacts/half").string(), "xx");
  CHECK_FALSE(store.lookup(k_commit, k_hash));

  // The next attempt starts from an empty directory.
  auto again = store.prepare(k_commit, k_hash);
  REQUIRE(again);
  CHECK(std::filesystem::is_empty(*again));

  // A truncated or foreign result file counts as not stored either.
  REQUIRE(base::write_file_atomic(*again / "result", ""));
  CHECK_FALSE(store.lookup(k_commit, k_hash));
  REQUIRE(base::write_file_atomic(*again / "result", "bisectd-build-result 1\noutcome maybe\n"));
  CHECK_FALSE(store.lookup(k_commit, k_hash));
}

TEST_CASE("kbuild::BuildStore rejects keys that are not plain names", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path() / "builds");
  kbuild::BuildResult result;
  for (std::string bad : {"", "..", "../../etc", "a/b", "a b"}) {
    INFO("commit '" << bad << "'");
    auto saved = store.save(bad, k_hash, result);
    REQUIRE_FALSE(saved);
    CHECK(saved.error().code == ErrorCode::invalid_input);
    CHECK_FALSE(store.prepare(bad, k_hash));
    CHECK_FALSE(store.lookup(bad, k_hash));
    CHECK_FALSE(store.save(k_commit, bad, result));
  }
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "etc"));
}

TEST_CASE("kbuild::BuildStore is safe from several threads on different commits", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path());
  constexpr int k_threads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      std::string commit = "c" + std::to_string(t);
      for (int i = 0; i < 20; ++i) {
        kbuild::BuildResult result;
        result.message = "m" + std::to_string(i);
        result.outcome = i % 2 == 0 ? kbuild::BuildOutcome::ok : kbuild::BuildOutcome::failed;
        bool ok = store.prepare(commit, k_hash) && store.save(commit, k_hash, result);
        auto stored = store.lookup(commit, k_hash);
        if (!ok || !stored || stored->message != result.message) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(failures == 0);
}
