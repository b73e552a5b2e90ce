#include "vcs/worktree_guard.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <vector>

namespace bisectd::vcs::detail {

namespace {

namespace fs = std::filesystem;

using BlobPtr = GitPtr<git_blob, git_blob_free>;

// The whole config of a worktree's repository: no core.worktree, no include, no hooks path, no reflogs.
constexpr std::string_view k_config = "[core]\n"
                                      "\trepositoryformatversion = 0\n"
                                      "\tfilemode = true\n"
                                      "\tbare = false\n"
                                      "\tlogallrefupdates = false\n"
                                      "\tsymlinks = true\n"
                                      "\tignorecase = false\n";
constexpr std::string_view k_unborn_head = "ref: refs/heads/master\n";
constexpr std::uintmax_t k_max_head_bytes = 4096;
constexpr std::uintmax_t k_max_index_bytes = std::uintmax_t{1} << 30; // a kernel tree's index is ~10 MB

// A regular file itself, not a link to one; at most `max_bytes`.
bool plain_file(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::regular) {
    return false;
  }
  auto size = fs::file_size(path, ec);
  return !ec && size <= max_bytes;
}

bool is_sha(std::string_view text) {
  return text.size() == 40 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The HEAD to write back: the detached sha the last checkout left, else unborn (the index is then the baseline).
std::string head_to_keep(const fs::path& git_dir) {
  auto path = git_dir / "HEAD";
  if (!plain_file(path, k_max_head_bytes)) {
    return std::string(k_unborn_head);
  }
  auto content = base::read_file(path);
  if (!content || !is_sha(base::trim(*content))) {
    return std::string(k_unborn_head);
  }
  return std::string(base::trim(*content)) + "\n";
}

// Removes every entry of the git dir but a plain index (remove_all removes links, it never follows them).
Status clear_git_dir(const fs::path& git_dir) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(git_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != "index" || !plain_file(it->path(), k_max_index_bytes)) {
      doomed.push_back(it->path());
    }
  }
  for (const auto& path : doomed) {
    if (!ec) {
      fs::remove_all(path, ec);
    }
  }
  if (ec) {
    return make_error(ErrorCode::io, git_dir.string() + ": cannot clear: " + ec.message());
  }
  return {};
}

// True when `path` is a symlink the index tracks there, pointing where the tracked one points.
bool tracked_link(git_repository* repo, git_index* index, const fs::path& worktree, const fs::path& path) {
  auto relative = path.lexically_relative(worktree).generic_string();
  const git_index_entry* entry = git_index_get_bypath(index, relative.c_str(), 0);
  if (entry == nullptr || entry->mode != GIT_FILEMODE_LINK) {
    return false;
  }
  git_blob* raw = nullptr;
  if (git_blob_lookup(&raw, repo, &entry->id) != 0) {
    return false;
  }
  BlobPtr blob(raw);
  std::string_view tracked(static_cast<const char*>(git_blob_rawcontent(raw)),
                           static_cast<std::size_t>(git_blob_rawsize(raw)));
  std::error_code ec;
  auto target = fs::read_symlink(path, ec);
  return !ec && target.native() == tracked;
}

} // namespace

Status reset_worktree_git_dir(const fs::path& worktree, const fs::path& objects_dir) {
  auto git_dir = worktree / ".git";
  std::error_code ec;
  auto type = fs::symlink_status(git_dir, ec).type();
  if (type == fs::file_type::not_found) {
    BISECTD_TRY(base::make_dirs(git_dir));
  } else if (type != fs::file_type::directory) {
    return make_error(ErrorCode::invalid_input,
                      "worktree " + worktree.string() +
                        ": .git is not a directory (a gitdir file or a link could send the checkout elsewhere); "
                        "remove the worktree to have it made again");
  }
  std::string head = head_to_keep(git_dir);
  BISECTD_TRY(clear_git_dir(git_dir));
  BISECTD_TRY(base::make_dirs(git_dir / "refs" / "heads"));
  BISECTD_TRY(base::make_dirs(git_dir / "refs" / "tags"));
  BISECTD_TRY(base::make_dirs(git_dir / "objects" / "info"));
  BISECTD_TRY(base::write_file_atomic(git_dir / "objects" / "info" / "alternates", objects_dir.string() + "\n"));
  BISECTD_TRY(base::write_file_atomic(git_dir / "config", k_config));
  return base::write_file_atomic(git_dir / "HEAD", head);
}

Result<RepoPtr> open_worktree_repository(const fs::path& worktree) {
  auto git_dir = worktree / ".git";
  git_repository* raw = nullptr;
  // Opened as a bare repository (libgit2 then reads no workdir from it) and given its workdir here.
  BISECTD_TRY(check(
    git_repository_open_ext(&raw, git_dir.c_str(),
                            GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_NO_DOTGIT | GIT_REPOSITORY_OPEN_BARE,
                            nullptr),
    "worktree " + worktree.string(), ErrorCode::io));
  RepoPtr repo(raw);
  BISECTD_TRY(
    check(git_repository_set_workdir(raw, worktree.c_str(), 0), "worktree " + worktree.string(), ErrorCode::io));
  return repo;
}

Status remove_untracked_links(git_repository* repo, git_index* index, const fs::path& worktree) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  fs::path at = worktree;
  // directory_options::none: a link to a directory is an entry, never descended into.
  fs::recursive_directory_iterator it(worktree, fs::directory_options::none, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    at = it->path();
    if (it.depth() == 0 && at.filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    auto type = it->symlink_status(ec).type();
    if (ec) {
      break;
    }
    if (type == fs::file_type::directory) {
      continue;
    }
    if (type == fs::file_type::regular) {
      // libgit2 rewrites a file in place: through a hard link, into whatever file it shares its inode with.
      if (it->hard_link_count(ec) > 1 && !ec) {
        doomed.push_back(at);
      }
      if (ec) {
        break;
      }
      continue;
    }
    if (type != fs::file_type::symlink || !tracked_link(repo, index, worktree, at)) {
      doomed.push_back(at); // a planted link, or a FIFO the checkout would block on
    }
  }
  for (const auto& path : doomed) {
    if (!ec) {
      at = path;
      fs::remove(path, ec);
    }
  }
  if (ec) {
    return make_error(ErrorCode::io, at.string() + ": " + ec.message());
  }
  return {};
}

} // namespace bisectd::vcs::detail
