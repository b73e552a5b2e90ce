#pragma once
// The project's only door to git (libgit2): mirrors, revisions, history, commit metadata, checkouts.
// A Repository is move-only and used by one thread at a time; separate Repository objects (even on the
// same directory) may be used from different threads.

#include "base/error.hpp"
#include "vcs/repo.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct git_repository;

namespace bisectd::vcs {

// A commit and its parents only (what bisection's DAG needs), cheaper to produce than CommitInfo.
struct CommitNode {
  std::string sha;
  std::vector<std::string> parents; // full shas, first parent first
};

// Ok for a local path, file://, http(s)://, ssh://, git:// and scp-like [user@]host:path URLs. Rejects
// empty URLs, spaces, control and shell metacharacters, a leading '-', and `transport::` helper syntax;
// the error (ErrorCode::invalid_input) names the URL.
Status validate_url(std::string_view url);

// True for URLs that reach another host (http(s)://, ssh://, git://, scp-like host:path); false for a local path
// and file://. Network remotes are cloned and fetched by a `git` child under TransferLimits; local ones by libgit2
// (a local clone hard-links the object files).
bool is_network_url(std::string_view url);

// Bounds on one clone or fetch of a network remote. libgit2 1.5 has no timeout on its sockets (a server that
// accepts and never answers blocks it for ever), so these remotes are fetched by a `git` child that is killed with
// its process group after `timeout`; an http(s) transfer below 1 KiB/s and a silent ssh server are given up on
// sooner (after a minute, or `timeout` when shorter).
struct TransferLimits {
  std::chrono::seconds timeout{600};
  const std::atomic<bool>* cancel = nullptr; // raised: the child is killed (ErrorCode::cancelled)
};

class Repository final : public Repo {
public:
  Repository(Repository&&) noexcept;
  Repository& operator=(Repository&&) noexcept;
  Repository(const Repository&) = delete;
  Repository& operator=(const Repository&) = delete;
  ~Repository() override;

  // Opens the (bare or non-bare) repository at `git_dir`. Error: not_found when it is not a repository.
  static Result<Repository> open(const std::filesystem::path& git_dir);

  // Bare mirror of `url` in `git_dir` (like `git clone --mirror`): created and fetched when absent,
  // opened and fetched (origin's URL updated to `url`) when it exists. `url` must pass validate_url.
  // A network remote that does not finish within `limits` fails with ErrorCode::timeout naming the URL and the
  // timeout; a mirror being created is removed again.
  static Result<Repository> mirror(const std::string& url, const std::filesystem::path& git_dir,
                                   const TransferLimits& limits = {});

  // Updates every ref from origin (+refs/*:refs/*), pruning refs that origin no longer has; then refreshes
  // the commit-graph when refs changed (or there is none). Bounded by `limits` for a network origin; git
  // updates the refs atomically, so other Repository objects on the same mirror may read meanwhile.
  Status fetch(const TransferLimits& limits = {});

  // Rewrites objects/info/commit-graph for all refs. range() then walks history from that one file instead
  // of reading every commit object (git uses the same file). Error: io when it cannot be written.
  Status write_commit_graph();

  // The full commit sha of any revision: branch, tag, sha or unique prefix, HEAD~2, master^2.
  // Error: not_found naming `rev`.
  Result<std::string> resolve(const std::string& rev) override;

  // Local branches ("master") → the commit sha they point at.
  Result<std::map<std::string, std::string>> branch_heads();

  // Metadata of the commit `sha` (any revision accepted).
  Result<CommitInfo> commit(const std::string& sha) override;

  // [good, c1, ..., bad]: bad's first-parent chain back to good (both included). Error (invalid_input)
  // naming both when good is not on bad's first-parent chain.
  Result<std::vector<std::string>> first_parent_chain(const std::string& good, const std::string& bad) override;

  // `git rev-list bad ^good1 ^good2 ...` with metadata, newest first and topological (every commit comes
  // before its parents). Parents outside the range are still listed in CommitInfo::parents.
  Result<std::vector<CommitInfo>> range(const std::vector<std::string>& goods, const std::string& bad);

  // The same commits and order as range(), with parents only: served from the commit-graph without
  // reading commit objects when the graph covers the tips. Use it for midpoints (bisectctl midpoint).
  Result<std::vector<CommitNode>> range_graph(const std::vector<std::string>& goods, const std::string& bad);

  // The best common ancestor of `a` and `b`. Error: not_found when they share no history.
  Result<std::string> merge_base(const std::string& a, const std::string& b) override;

  // The range a bisection must search when the first bad first-parent commit is the merge `sha`: good = the
  // merge base of its first two parents, bad = its second parent (the merged branch's tip). nullopt when
  // `sha` is not a merge or the branch adds nothing (its tip is already an ancestor of the first parent).
  Result<std::optional<std::pair<std::string, std::string>>> merged_range(const std::string& sha) override;

  // True when `ancestor` is reachable from `descendant` (a commit is its own ancestor, as in git).
  Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) override;

  // Paths added, modified or deleted by `sha` against its first parent (all files for a root commit), sorted.
  Result<std::vector<std::string>> changed_paths(const std::string& sha) override;

  // `git format-patch`-like text: "From <sha> ...", From:, Date:, Subject:, message, ---, diffstat, diff
  // (against the first parent).
  Result<std::string> patch(const std::string& sha) override;
  Result<std::string> diffstat(const std::string& sha) override;

  // Checks `sha` out into `worktree`, a reusable non-bare repository created on first use whose objects
  // come from this repository (alternates). Only files that differ are rewritten (unchanged files keep
  // their mtime); tracked files the commit lacks and untracked files are removed; ignored files stay
  // unless a tracked path needs their place. HEAD is left detached at `sha`.
  Status checkout(const std::string& sha, const std::filesystem::path& worktree) override;

  // A new commit object on no branch: `onto` with `culprit`'s change reverted (mainline 1 for merges).
  // Error: conflict naming the conflicting paths.
  Result<std::string> revert_onto(const std::string& culprit, const std::string& onto) override;

  // The repository's git directory.
  [[nodiscard]] std::filesystem::path git_dir() const;

private:
  explicit Repository(git_repository* repo);
  Status fetch_with_git(const std::string& url, const TransferLimits& limits);

  struct Free {
    void operator()(git_repository* repo) const noexcept;
  };
  std::unique_ptr<git_repository, Free> m_repo;
};

} // namespace bisectd::vcs
