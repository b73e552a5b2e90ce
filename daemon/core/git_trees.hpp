#pragma once
// Local mirrors (DATA_DIR/mirrors/NAME.git) and worktrees (DATA_DIR/worktrees/NAME) of registered trees, with
// libgit2. Handles are not shared between threads: every operation opens the mirror under the tree's lock.
// Clones and fetches take another lock (one transfer per tree at a time), not that one: a network remote may take
// up to `limits.timeout`, and the scheduler reads the tree's history meanwhile (git updates refs atomically).

#include "daemon/core/tree_repos.hpp"
#include "vcs/repository.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace bisectd::daemon {

class GitTrees final : public TreeRepos {
public:
  explicit GitTrees(std::filesystem::path data_dir, vcs::TransferLimits limits = {})
      : m_data_dir(std::move(data_dir)), m_limits(limits) {}

  Status mirror(const std::string& name, const std::string& url) override;
  Result<std::map<std::string, std::string>> fetch(const std::string& name) override;
  Status with_repo(const std::string& name, const std::function<Status(vcs::Repo&)>& action) override;
  std::mutex& worktree_lock(const std::string& name) override;
  [[nodiscard]] std::filesystem::path mirror_dir(const std::string& name) const override;
  [[nodiscard]] std::filesystem::path worktree_dir(const std::string& name) const override;

private:
  struct Locks {
    std::mutex repo;
    std::mutex worktree;
    std::mutex transfer; // clone and fetch
  };
  Locks& locks(const std::string& name);

  std::filesystem::path m_data_dir;
  vcs::TransferLimits m_limits;
  std::mutex m_mutex;
  std::map<std::string, std::unique_ptr<Locks>> m_locks;
};

} // namespace bisectd::daemon
