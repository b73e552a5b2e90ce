#include "vcs/git_handle.hpp"

#include <mutex>

namespace bisectd::vcs::detail {

void ensure_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // Like git, don't re-hash every object read: fetches already verify what they index, and re-hashing
    // (SHA-1 with collision detection) costs ~15 % of a history walk.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
  });
}

Error git_failure(int rc, std::string_view what, ErrorCode fallback) {
  const git_error* last = git_error_last();
  std::string cause =
    last != nullptr && last->message != nullptr ? last->message : "libgit2 error " + std::to_string(rc);
  ErrorCode code = fallback;
  if (rc == GIT_ENOTFOUND) {
    code = ErrorCode::not_found;
  } else if (rc == GIT_ECONFLICT || rc == GIT_EMERGECONFLICT) {
    code = ErrorCode::conflict;
  }
  return Error{code, std::string(what) + ": " + cause};
}

Status check(int rc, std::string_view what, ErrorCode fallback) {
  if (rc < 0) {
    return std::unexpected(git_failure(rc, what, fallback));
  }
  return {};
}

Result<git_oid> parse_oid(std::string_view sha) {
  git_oid oid;
  if (sha.size() != GIT_OID_HEXSZ || git_oid_fromstrn(&oid, sha.data(), sha.size()) != 0) {
    return make_error(ErrorCode::invalid_input, "sha '" + std::string(sha) + "': not a full 40-hex object id");
  }
  return oid;
}

std::string to_hex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &oid);
  return std::string(hex, GIT_OID_HEXSZ);
}

Result<CommitPtr> lookup_commit(git_repository* repo, const std::string& rev) {
  if (rev.empty() || rev.front() == '-') {
    return make_error(ErrorCode::invalid_input, "revision '" + rev + "': not a valid revision");
  }
  git_object* object = nullptr;
  int rc = git_revparse_single(&object, repo, rev.c_str());
  if (rc < 0) {
    Error error = git_failure(rc, "revision '" + rev + "'", ErrorCode::invalid_input);
    if (rc == GIT_ENOTFOUND || rc == GIT_EAMBIGUOUS || rc == GIT_EINVALIDSPEC) {
      error.code = rc == GIT_ENOTFOUND ? ErrorCode::not_found : ErrorCode::invalid_input;
    }
    return std::unexpected(error);
  }
  ObjectPtr owned(object);
  git_object* peeled = nullptr;
  BISECTD_TRY(check(git_object_peel(&peeled, owned.get(), GIT_OBJECT_COMMIT), "revision '" + rev + "': not a commit",
                    ErrorCode::invalid_input));
  return CommitPtr(reinterpret_cast<git_commit*>(peeled));
}

Result<TreePtr> first_parent_tree(git_commit* commit) {
  if (git_commit_parentcount(commit) == 0) {
    return TreePtr{};
  }
  git_commit* parent = nullptr;
  BISECTD_TRY(check(git_commit_parent(&parent, commit, 0), "first parent of " + to_hex(*git_commit_id(commit))));
  CommitPtr owned(parent);
  git_tree* tree = nullptr;
  BISECTD_TRY(check(git_commit_tree(&tree, owned.get()), "tree of " + to_hex(*git_commit_id(parent))));
  return TreePtr(tree);
}

} // namespace bisectd::vcs::detail
