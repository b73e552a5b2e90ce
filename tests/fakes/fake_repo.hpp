#pragma once
// An in-memory history (commits with parents, subjects, changed paths and patches) behind vcs::Repo, and trees
// of such histories behind daemon::TreeRepos: the daemon's decisions are tested without a git repository.

#include "daemon/core/tree_repos.hpp"
#include "vcs/repo.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace bisectd::test {

class FakeRepo final : public vcs::Repo {
public:
  // Adds a commit (sha = 40 characters made from `name`) with `parents` (names); returns its sha.
  std::string add(const std::string& name, const std::vector<std::string>& parents, const std::string& subject = "",
                  const std::vector<std::string>& paths = {"src/main.c"});
  // A first-parent line of `n` commits named prefix0..prefix{n-1} on top of `base` (empty: a root); their shas.
  std::vector<std::string> line(const std::string& prefix, int n, const std::string& base = "");
  // The sha a name was given.
  [[nodiscard]] static std::string sha_of(const std::string& name);
  void set_branch(const std::string& branch, const std::string& sha) { m_branches[branch] = sha; }
  [[nodiscard]] const std::map<std::string, std::string>& branches() const { return m_branches; }
  // What checkout() was asked, in order.
  [[nodiscard]] const std::vector<std::string>& checkouts() const { return m_checkouts; }

  Result<std::string> resolve(const std::string& rev) override;
  Result<vcs::CommitInfo> commit(const std::string& sha) override;
  Result<std::vector<std::string>> first_parent_chain(const std::string& good, const std::string& bad) override;
  Result<std::optional<std::pair<std::string, std::string>>> merged_range(const std::string& sha) override;
  Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) override;
  // The first commit of `b`'s first-parent line that `a` contains (enough for the tests' histories).
  Result<std::string> merge_base(const std::string& a, const std::string& b) override;
  Result<std::vector<std::string>> changed_paths(const std::string& sha) override;
  Result<std::string> patch(const std::string& sha) override;
  Result<std::string> diffstat(const std::string& sha) override;
  Status checkout(const std::string& sha, const std::filesystem::path& worktree) override;
  Result<std::string> revert_onto(const std::string& culprit, const std::string& onto) override;

private:
  struct Commit {
    vcs::CommitInfo info;
    std::vector<std::string> paths;
  };
  Result<const Commit*> find(const std::string& sha) const;

  std::map<std::string, Commit> m_commits;
  std::map<std::string, std::string> m_branches;
  std::vector<std::string> m_checkouts;
};

class FakeTrees final : public daemon::TreeRepos {
public:
  explicit FakeTrees(std::filesystem::path root) : m_root(std::move(root)) {}
  // The history of tree `name` (created empty on first use).
  FakeRepo& repo(const std::string& name);

  Status mirror(const std::string& name, const std::string& url) override;
  Result<std::map<std::string, std::string>> fetch(const std::string& name) override;
  Status with_repo(const std::string& name, const std::function<Status(vcs::Repo&)>& action) override;
  std::mutex& worktree_lock(const std::string& name) override;
  [[nodiscard]] std::filesystem::path mirror_dir(const std::string& name) const override;
  [[nodiscard]] std::filesystem::path worktree_dir(const std::string& name) const override;

private:
  std::filesystem::path m_root;
  std::mutex m_mutex;
  std::map<std::string, std::unique_ptr<FakeRepo>> m_repos;
  std::map<std::string, std::unique_ptr<std::mutex>> m_locks;
};

} // namespace bisectd::test
