#pragma once
// A synthetic kernel-like history for the midpoint benchmark: a mainline, topic branches forked from
// recent or old mainline commits and merged back (sometimes with merges of their own), generated
// deterministically and imported with `git fast-import` in one process.

#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bisectd::bench {

struct DagShape {
  std::size_t commits = 60000; // at least this many commits
  std::uint64_t seed = 1;
};

struct DagRepo {
  std::filesystem::path git_dir;
  std::vector<std::string> mainline;   // first-parent chain of master, oldest first
  std::vector<std::string> topic_tips; // tips of merged topic branches, oldest first
  std::size_t commits = 0;
  std::size_t merges = 0;
};

// The repository for `shape` under `cache_dir`, generated on first use (a marker file records completion).
Result<DagRepo> ensure_dag_repo(const DagShape& shape, const std::filesystem::path& cache_dir);

} // namespace bisectd::bench
