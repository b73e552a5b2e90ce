#pragma once
// Local mirrors and worktrees of registered trees. libgit2 handles are not shared between threads: every
// operation opens the mirror under the tree's lock.

#include "base/error.hpp"
#include "vcs/repository.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace bisectd::daemon {

class Trees {
public:
  explicit Trees(std::filesystem::path data_dir) : m_data_dir(std::move(data_dir)) {}

  // Clones (or updates) the mirror of `url` for tree `name`.
  Status mirror(const std::string& name, const std::string& url);
  // Fetches and returns the branch heads.
  Result<std::map<std::string, std::string>> fetch(const std::string& name);
  // Runs `action` with the tree's repository open, under the tree's repository lock.
  Status with_repo(const std::string& name, const std::function<Status(vcs::Repository&)>& action);
  // The lock that serialises checkout + build in the tree's worktree.
  std::mutex& worktree_lock(const std::string& name);

  [[nodiscard]] std::filesystem::path mirror_dir(const std::string& name) const;
  [[nodiscard]] std::filesystem::path worktree_dir(const std::string& name) const;

private:
  struct Locks {
    std::mutex repo;
    std::mutex worktree;
  };
  Locks& locks(const std::string& name);

  std::filesystem::path m_data_dir;
  std::mutex m_mutex;
  std::map<std::string, std::unique_ptr<Locks>> m_locks;
};

} // namespace bisectd::daemon
