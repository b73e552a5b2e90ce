#pragma once
// What the daemon asks of a tree's history, as an interface: Repository (libgit2) implements it, and tests use an
// in-memory history (tests/fakes/fake_repo.hpp) so that decisions are tested without a git repository.

#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::vcs {

struct Trailer {
  std::string key;   // "Signed-off-by"
  std::string value; // "Jane <j@x.org>"
};

struct CommitInfo {
  std::string sha;
  std::vector<std::string> parents; // full shas, in parent order (first parent first)
  std::string subject;              // first line of the message
  std::string body;                 // the message after the subject line, leading blank lines dropped
  std::string author_name, author_email, committer_name, committer_email;
  std::int64_t author_time = 0, commit_time = 0; // seconds since the epoch
  std::vector<Trailer> trailers;                 // from the last paragraph, git interpret-trailers style
};

class Repo {
public:
  virtual ~Repo() = default;

  // The full commit sha of any revision: branch, tag, sha or unique prefix, HEAD~2, master^2.
  // Error: not_found naming `rev`.
  virtual Result<std::string> resolve(const std::string& rev) = 0;

  // Metadata of the commit `sha` (any revision accepted).
  virtual Result<CommitInfo> commit(const std::string& sha) = 0;

  // [good, c1, ..., bad]: bad's first-parent chain back to good (both included). Error (invalid_input)
  // naming both when good is not on bad's first-parent chain.
  virtual Result<std::vector<std::string>> first_parent_chain(const std::string& good, const std::string& bad) = 0;

  // The range a bisection must search when the first bad first-parent commit is the merge `sha`: good = the
  // merge base of its first two parents, bad = its second parent (the merged branch's tip). nullopt when
  // `sha` is not a merge or the branch adds nothing (its tip is already an ancestor of the first parent).
  virtual Result<std::optional<std::pair<std::string, std::string>>> merged_range(const std::string& sha) = 0;

  // The best common ancestor of `a` and `b` (where a rewritten branch's new history leaves its old one).
  // Error: not_found when they share no history.
  virtual Result<std::string> merge_base(const std::string& a, const std::string& b) = 0;

  // True when `ancestor` is reachable from `descendant` (a commit is its own ancestor, as in git).
  virtual Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) = 0;

  // Paths added, modified or deleted by `sha` against its first parent (all files for a root commit), sorted.
  virtual Result<std::vector<std::string>> changed_paths(const std::string& sha) = 0;

  // `git format-patch`-like text: "From <sha> ...", From:, Date:, Subject:, message, ---, diffstat, diff
  // (against the first parent).
  virtual Result<std::string> patch(const std::string& sha) = 0;

  // `git show --stat`-like text of what `sha` changed against its first parent, renames detected: one
  // " path | N +++--" line per file, then " F files changed, I insertions(+), D deletions(-)". Paths are the tree's
  // (hostile) names as they are: a caller that mails the text makes it safe.
  virtual Result<std::string> diffstat(const std::string& sha) = 0;

  // Checks `sha` out into `worktree` (see Repository::checkout).
  virtual Status checkout(const std::string& sha, const std::filesystem::path& worktree) = 0;

  // A new commit object on no branch: `onto` with `culprit`'s change reverted (mainline 1 for merges).
  // Error: conflict naming the conflicting paths.
  virtual Result<std::string> revert_onto(const std::string& culprit, const std::string& onto) = 0;
};

} // namespace bisectd::vcs
