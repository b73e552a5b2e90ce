// Reusable build worktrees: a non-bare repository per worktree that borrows the mirror's objects through
// .git/objects/info/alternates, so a checkout rewrites only the files that differ and incremental builds
// (make, kbuild) see unchanged mtimes on everything else.
#include "base/fs.hpp"
#include "vcs/git_handle.hpp"
#include "vcs/repository.hpp"
#include "vcs/worktree_guard.hpp"

#include <system_error>

namespace bisectd::vcs {

using namespace detail;

namespace {

namespace fs = std::filesystem;

// Opens the worktree repository, creating it on first use, with its git dir reset to what bisectd made
// (worktree_guard.hpp). Refuses a non-empty directory that is not one: a forced checkout there would delete
// someone's files.
Result<RepoPtr> open_worktree(const fs::path& worktree, const fs::path& objects_dir) {
  std::error_code ec;
  bool is_repo = fs::symlink_status(worktree / ".git", ec).type() != fs::file_type::not_found;
  if (!is_repo && fs::exists(worktree, ec) && !fs::is_empty(worktree, ec)) {
    return make_error(ErrorCode::invalid_input,
                      "worktree " + worktree.string() + ": exists, is not empty and is not a git worktree");
  }
  BISECTD_TRY(base::make_dirs(worktree));
  BISECTD_TRY(reset_worktree_git_dir(worktree, objects_dir));
  return open_worktree_repository(worktree);
}

// True when the worktree's HEAD names a commit its objects still have. It may not: a revert commit made in a mirror
// that was later re-cloned, a tree removed and registered again, or an unborn HEAD (a new worktree, whose index is
// empty, or one whose HEAD was not a plain sha: worktree_guard.cpp).
bool head_resolves(git_repository* repo) {
  if (git_repository_head_unborn(repo) == 1) {
    return false;
  }
  // Looked up step by step: libgit2 1.5 leaks the reference when git_revparse_single("HEAD^{tree}") fails.
  git_reference* head = nullptr;
  if (git_repository_head(&head, repo) != 0) {
    return false;
  }
  const git_oid* id = git_reference_target(head);
  git_commit* commit = nullptr;
  git_tree* tree = nullptr;
  bool resolves = id != nullptr && git_commit_lookup(&commit, repo, id) == 0 && git_commit_tree(&tree, commit) == 0;
  git_tree_free(tree);
  git_commit_free(commit);
  git_reference_free(head);
  return resolves;
}

} // namespace

Status Repository::checkout(const std::string& sha, const fs::path& worktree) {
  BISECTD_TRY_ASSIGN(auto commit, lookup_commit(m_repo.get(), sha));
  const git_oid id = *git_commit_id(commit.get());
  std::string what = "checkout " + to_hex(id) + " into " + worktree.string();
  fs::path objects_dir = fs::absolute(fs::path(git_repository_path(m_repo.get())) / "objects");
  auto repo = open_worktree(worktree, objects_dir);
  if (!repo) {
    return std::unexpected(repo.error().context("checkout " + to_hex(id)));
  }
  git_commit* target = nullptr;
  BISECTD_TRY(check(git_commit_lookup(&target, repo->get(), &id), what));
  CommitPtr owned_target(target);
  git_checkout_options options = GIT_CHECKOUT_OPTIONS_INIT;
  // FORCE: build outputs that modified tracked files never block; REMOVE_UNTRACKED: leftovers of another
  // commit go; ignored files (object files, .config) stay for incremental builds.
  options.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
  git_index* index = nullptr;
  BISECTD_TRY(check(git_repository_index(&index, repo->get()), what + ": index", ErrorCode::io));
  IndexPtr owned_index(index);
  // Before libgit2 looks: it would write or delete through a link a build planted.
  BISECTD_TRY(remove_untracked_links(repo->get(), index, worktree));
  if (!head_resolves(repo->get())) {
    // Compare with what the index says is on disk instead: unchanged files still keep their mtimes.
    options.baseline_index = index;
  }
  BISECTD_TRY(
    check(git_checkout_tree(repo->get(), reinterpret_cast<const git_object*>(target), &options), what, ErrorCode::io));
  BISECTD_TRY(check(git_repository_set_head_detached(repo->get(), &id), what + ": detach HEAD", ErrorCode::io));
  return {};
}

} // namespace bisectd::vcs
