#pragma once
// The registered trees' git side: mirrors, fetches, history queries and the worktree builds check out into.
// GitTrees (daemon/core/git_trees.hpp) is the libgit2 implementation; tests use an in-memory one.

#include "base/error.hpp"
#include "vcs/repo.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace bisectd::daemon {

class TreeRepos {
public:
  virtual ~TreeRepos() = default;
  // Clones (or updates) the mirror of `url` for tree `name`.
  virtual Status mirror(const std::string& name, const std::string& url) = 0;
  // Fetches and returns the branch heads (branch → sha).
  virtual Result<std::map<std::string, std::string>> fetch(const std::string& name) = 0;
  // Runs `action` with the tree's history open, under the tree's lock (history handles are not shared).
  virtual Status with_repo(const std::string& name, const std::function<Status(vcs::Repo&)>& action) = 0;
  // The lock that serialises checkout + build in the tree's worktree.
  virtual std::mutex& worktree_lock(const std::string& name) = 0;
  [[nodiscard]] virtual std::filesystem::path mirror_dir(const std::string& name) const = 0;
  [[nodiscard]] virtual std::filesystem::path worktree_dir(const std::string& name) const = 0;
};

} // namespace bisectd::daemon
