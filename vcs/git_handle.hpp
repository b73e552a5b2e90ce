#pragma once
// Internal to vcs/: RAII owners for libgit2 handles and the libgit2 → Error conversion.
// Only vcs/*.cpp include this header; the public vcs headers never expose libgit2 types.

#include "base/error.hpp"

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

namespace bisectd::vcs::detail {

// Calls git_libgit2_init exactly once per process (thread-safe); libgit2 stays initialised until exit.
void ensure_libgit2();

// An Error for a failed libgit2 call: "`what`: <git_error_last() message>". GIT_ENOTFOUND maps to
// ErrorCode::not_found, conflicts to ErrorCode::conflict, everything else to `fallback`.
Error git_failure(int rc, std::string_view what, ErrorCode fallback = ErrorCode::generic);

// `rc` < 0 → the Error above; used as BISECTD_TRY(check(git_x(...), "what")).
Status check(int rc, std::string_view what, ErrorCode fallback = ErrorCode::generic);

template <class T, void (*Free)(T*)> struct GitDeleter {
  void operator()(T* handle) const noexcept { Free(handle); }
};
template <class T, void (*Free)(T*)> using GitPtr = std::unique_ptr<T, GitDeleter<T, Free>>;

using RepoPtr = GitPtr<git_repository, git_repository_free>;
using CommitPtr = GitPtr<git_commit, git_commit_free>;
using TreePtr = GitPtr<git_tree, git_tree_free>;
using ObjectPtr = GitPtr<git_object, git_object_free>;
using RemotePtr = GitPtr<git_remote, git_remote_free>;
using RevwalkPtr = GitPtr<git_revwalk, git_revwalk_free>;
using DiffPtr = GitPtr<git_diff, git_diff_free>;
using DiffStatsPtr = GitPtr<git_diff_stats, git_diff_stats_free>;
using IndexPtr = GitPtr<git_index, git_index_free>;
using ReferencePtr = GitPtr<git_reference, git_reference_free>;
using RefIteratorPtr = GitPtr<git_reference_iterator, git_reference_iterator_free>;
using SignaturePtr = GitPtr<git_signature, git_signature_free>;
using ConfigPtr = GitPtr<git_config, git_config_free>;

// Owns a git_buf (freed with git_buf_dispose).
class Buf {
public:
  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { git_buf_dispose(&m_buf); }
  git_buf* get() { return &m_buf; }
  [[nodiscard]] std::string str() const { return m_buf.ptr != nullptr ? std::string(m_buf.ptr, m_buf.size) : ""; }

private:
  git_buf m_buf = GIT_BUF_INIT;
};

// Parses a full 40-hex sha (no abbreviations); errors name the string.
Result<git_oid> parse_oid(std::string_view sha);

std::string to_hex(const git_oid& oid);

// Peels any revision (sha, prefix, ref, HEAD~2) to its commit.
Result<CommitPtr> lookup_commit(git_repository* repo, const std::string& rev);

// The tree of `commit`'s first parent, or null for a root commit.
Result<TreePtr> first_parent_tree(git_commit* commit);

} // namespace bisectd::vcs::detail
