#pragma once
// Temporary git repositories for vcs tests, built with the `git` CLI through base::run and fixed dates,
// so every run produces the same history shape (and, for equal content, the same shas).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::test {

class GitFixture {
public:
  // A fresh temp dir (under $BISECTD_TEST_TMP when set) holding an empty non-bare repo "origin" on master.
  GitFixture();
  GitFixture(const GitFixture&) = delete;
  GitFixture& operator=(const GitFixture&) = delete;
  ~GitFixture();

  [[nodiscard]] const std::filesystem::path& dir() const { return m_dir; }
  [[nodiscard]] std::filesystem::path origin() const { return m_dir / "origin"; }

  // Runs `git args...` in `cwd` (default: origin); fails the test on a non-zero exit. Returns trimmed stdout.
  std::string git(const std::vector<std::string>& args, const std::filesystem::path& cwd = {});

  // Writes `files` (path → content; std::nullopt deletes), commits everything with `message`, returns the sha.
  std::string commit(const std::string& message, const std::map<std::string, std::optional<std::string>>& files);

  // Merges `branch` into the current branch with a merge commit.
  void commit_merge(const std::string& branch, const std::string& message);
  // Merges several branches at once (an octopus merge).
  void commit_merge_many(const std::vector<std::string>& branches, const std::string& message);

private:
  std::filesystem::path m_dir;
  int m_tick = 0;
};

// master: A - B - C - M - D, with topic T1 - T2 forked at B and merged by M (first parent C).
struct MergeHistory {
  std::string a, b, c, t1, t2, m, d;
};
MergeHistory build_merge_history(GitFixture& fixture);

// One merge history shared by the read-only tests of this binary (built on first use): saves git runs.
struct SharedHistory {
  GitFixture fixture;
  MergeHistory h;
};
SharedHistory& shared_history();

// Reads a whole file ("" when missing).
std::string slurp(const std::filesystem::path& path);

// Writes `content` to `path`, creating its directories.
void put_file(const std::filesystem::path& path, const std::string& content);

} // namespace bisectd::test
