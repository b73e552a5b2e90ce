#include "daemon/core/git_trees.hpp"

namespace bisectd::daemon {

GitTrees::Locks& GitTrees::locks(const std::string& name) {
  std::lock_guard lock(m_mutex);
  auto& slot = m_locks[name];
  if (!slot) {
    slot = std::make_unique<Locks>();
  }
  return *slot;
}

std::filesystem::path GitTrees::mirror_dir(const std::string& name) const {
  return m_data_dir / "mirrors" / (name + ".git");
}

std::filesystem::path GitTrees::worktree_dir(const std::string& name) const { return m_data_dir / "worktrees" / name; }

namespace {

// A timeout says which setting bounds it.
Error with_setting(Error error) {
  if (error.code == ErrorCode::timeout) {
    error.message += " (fetch_timeout)";
  }
  return error;
}

} // namespace

Status GitTrees::mirror(const std::string& name, const std::string& url) {
  std::lock_guard lock(locks(name).transfer);
  if (auto mirrored = vcs::Repository::mirror(url, mirror_dir(name), m_limits); !mirrored) {
    return std::unexpected(with_setting(mirrored.error()));
  }
  return {};
}

Result<std::map<std::string, std::string>> GitTrees::fetch(const std::string& name) {
  std::lock_guard lock(locks(name).transfer);
  BISECTD_TRY_ASSIGN(auto repo, vcs::Repository::open(mirror_dir(name)));
  if (auto fetched = repo.fetch(m_limits); !fetched) {
    return std::unexpected(with_setting(fetched.error()));
  }
  return repo.branch_heads();
}

Status GitTrees::with_repo(const std::string& name, const std::function<Status(vcs::Repo&)>& action) {
  std::lock_guard lock(locks(name).repo);
  BISECTD_TRY_ASSIGN(auto repo, vcs::Repository::open(mirror_dir(name)));
  return action(repo);
}

std::mutex& GitTrees::worktree_lock(const std::string& name) { return locks(name).worktree; }

} // namespace bisectd::daemon
