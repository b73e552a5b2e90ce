#pragma once
// Internal to vcs/: a worktree is hostile ground. A tree's build (and, unsandboxed, anything it started) can change
// every file of the worktree, and the checkout that follows runs in the daemon, unsandboxed, with FORCE and
// REMOVE_UNTRACKED. These helpers make that checkout act on the worktree and nothing else.

#include "base/error.hpp"
#include "vcs/git_handle.hpp"

#include <filesystem>

namespace bisectd::vcs::detail {

// Puts back the worktree's git dir as bisectd made it, trusting nothing a build could have changed there: keeps
// HEAD (a detached sha, else unborn) and the index (the baseline of an incremental checkout) when they are regular
// files, removes everything else (config and its includes, commondir, logs, refs, info, hooks, links anywhere) and
// writes a fixed config, empty refs and the alternates naming `objects_dir`. Creates the git dir when there is
// none. Refuses a `.git` that is not a directory (a gitdir file or a symlink redirecting the repository).
Status reset_worktree_git_dir(const std::filesystem::path& worktree, const std::filesystem::path& objects_dir);

// Opens the git dir reset above with `worktree` as its explicit workdir (never one named by the git dir).
Result<RepoPtr> open_worktree_repository(const std::filesystem::path& worktree);

// Unlinks every symlink outside .git that `index` does not track as that very symlink (same path, same target),
// every file with another hard link, and every FIFO, socket or device, so that the checkout never writes or
// deletes through a link a build planted. Walks with lstat, never following a link.
Status remove_untracked_links(git_repository* repo, git_index* index, const std::filesystem::path& worktree);

} // namespace bisectd::vcs::detail
