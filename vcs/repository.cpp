// Repository lifetime, mirroring and fetching, revision lookups.
#include "vcs/repository.hpp"

#include "vcs/commit_graph.hpp"
#include "vcs/git_handle.hpp"
#include "vcs/transfer.hpp"

#include <system_error>

namespace bisectd::vcs {

using namespace detail;

namespace {

constexpr const char* k_mirror_refspec = "+refs/*:refs/*";

// Credentials for ssh:// and scp-like URLs come from the ssh agent; other transports need none.
int agent_credentials(git_credential** out, const char* /*url*/, const char* username, unsigned int allowed,
                      void* payload) {
  auto* attempts = static_cast<int*>(payload);
  if ((allowed & GIT_CREDENTIAL_SSH_KEY) != 0 && (*attempts)++ == 0) {
    return git_credential_ssh_key_from_agent(out, username != nullptr ? username : "git");
  }
  return GIT_PASSTHROUGH;
}

// Points the mirror's HEAD at origin's default branch (as `git clone --mirror` does); best effort.
void follow_remote_head(git_repository* repo, git_remote* remote) {
  Buf head;
  if (git_remote_default_branch(head.get(), remote) == 0) {
    git_repository_set_head(repo, head.str().c_str());
  }
}

int create_mirror_remote(git_remote** out, git_repository* repo, const char* name, const char* url, void*) {
  return git_remote_create_with_fetchspec(out, repo, name, url, k_mirror_refspec);
}

// A fresh bare mirror through git_clone: for a local path libgit2 hard-links the source's object files
// instead of packing them (a 1.3 GB kernel tree takes seconds, not many minutes); other URLs are fetched.
Result<RepoPtr> clone_bare_mirror(const std::string& url, const std::filesystem::path& git_dir) {
  git_clone_options options = GIT_CLONE_OPTIONS_INIT;
  options.bare = 1;
  options.local = GIT_CLONE_LOCAL_AUTO;
  options.remote_cb = create_mirror_remote;
  int attempts = 0;
  options.fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  options.fetch_opts.callbacks.credentials = agent_credentials;
  options.fetch_opts.callbacks.payload = &attempts;
  git_repository* raw = nullptr;
  BISECTD_TRY(check(git_clone(&raw, url.c_str(), git_dir.c_str(), &options), "clone " + url, ErrorCode::unreachable));
  RepoPtr repo(raw);
  git_config* config = nullptr;
  BISECTD_TRY(check(git_repository_config(&config, repo.get()), "config of " + git_dir.string()));
  ConfigPtr owned_config(config);
  BISECTD_TRY(check(git_config_set_bool(config, "remote.origin.mirror", 1), "config of " + git_dir.string()));
  return repo;
}

// Opens an existing mirror and makes sure origin points at `url`.
Result<RepoPtr> reopen_mirror(const std::string& url, const std::filesystem::path& git_dir) {
  git_repository* raw = nullptr;
  BISECTD_TRY(check(git_repository_open_ext(&raw, git_dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
                    "open " + git_dir.string()));
  RepoPtr repo(raw);
  git_remote* remote = nullptr;
  if (git_remote_lookup(&remote, repo.get(), "origin") == GIT_ENOTFOUND) {
    BISECTD_TRY(check(git_remote_create_with_fetchspec(&remote, repo.get(), "origin", url.c_str(), k_mirror_refspec),
                      "add remote " + url));
  } else if (remote != nullptr && std::string_view(git_remote_url(remote)) != url) {
    BISECTD_TRY(check(git_remote_set_url(repo.get(), "origin", url.c_str()), "set origin of " + git_dir.string()));
  }
  git_remote_free(remote);
  return repo;
}

// A fresh bare mirror of a network remote by `git clone --mirror` (bounded: vcs/transfer.hpp).
Status clone_network_mirror(const std::string& url, const std::filesystem::path& git_dir,
                            const TransferLimits& limits) {
  return run_transfer({"clone", "--mirror", "--", url, git_dir.string()}, limits, "clone " + url);
}

// Every ref's name and target: tells whether a fetch by a git child changed anything.
Result<std::string> refs_snapshot(git_repository* repo) {
  git_reference_iterator* raw = nullptr;
  BISECTD_TRY(check(git_reference_iterator_new(&raw, repo), "list refs"));
  RefIteratorPtr iterator(raw);
  std::string snapshot;
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, iterator.get()) == 0) {
    ReferencePtr owned(ref);
    snapshot += git_reference_name(ref);
    const git_oid* target = git_reference_target(ref);
    snapshot += target != nullptr ? " " + to_hex(*target) + "\n" : "\n";
  }
  return snapshot;
}

} // namespace

void Repository::Free::operator()(git_repository* repo) const noexcept { git_repository_free(repo); }

Repository::Repository(git_repository* repo) : m_repo(repo) {}
Repository::Repository(Repository&&) noexcept = default;
Repository& Repository::operator=(Repository&&) noexcept = default;
Repository::~Repository() = default;

Result<Repository> Repository::open(const std::filesystem::path& git_dir) {
  ensure_libgit2();
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, git_dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc < 0) {
    return std::unexpected(git_failure(rc, "open repository " + git_dir.string(), ErrorCode::io));
  }
  return Repository(raw);
}

Result<Repository> Repository::mirror(const std::string& url, const std::filesystem::path& git_dir,
                                      const TransferLimits& limits) {
  BISECTD_TRY(validate_url(url));
  ensure_libgit2();
  std::error_code ec;
  bool existed = std::filesystem::exists(git_dir, ec) && !std::filesystem::is_empty(git_dir, ec);
  auto forget = [&](const Error& error) {
    if (!existed) {
      std::filesystem::remove_all(git_dir, ec);
    }
    return std::unexpected(error.context("mirror " + url + " into " + git_dir.string()));
  };
  if (!existed && is_network_url(url)) { // cloned by git: nothing more to fetch
    if (auto cloned = clone_network_mirror(url, git_dir, limits); !cloned) {
      return forget(cloned.error());
    }
    auto repo = open(git_dir);
    if (!repo) {
      return forget(repo.error());
    }
    if (auto graph = repo->write_commit_graph(); !graph) {
      return forget(graph.error());
    }
    return repo;
  }
  auto repo = existed ? reopen_mirror(url, git_dir) : clone_bare_mirror(url, git_dir);
  if (!repo) {
    return std::unexpected(repo.error().context("mirror " + url));
  }
  Repository result(repo->release());
  if (auto fetched = result.fetch(limits); !fetched) {
    result.m_repo.reset();
    return forget(fetched.error());
  }
  return result;
}

Status Repository::fetch(const TransferLimits& limits) {
  git_remote* raw = nullptr;
  BISECTD_TRY(check(git_remote_lookup(&raw, m_repo.get(), "origin"), "fetch: remote origin"));
  RemotePtr remote(raw);
  std::string url = git_remote_url(remote.get());
  if (is_network_url(url)) {
    return fetch_with_git(url, limits);
  }
  int attempts = 0;
  git_fetch_options options = GIT_FETCH_OPTIONS_INIT;
  options.prune = GIT_FETCH_PRUNE;
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  options.callbacks.credentials = agent_credentials;
  options.callbacks.payload = &attempts;
  BISECTD_TRY(
    check(git_remote_fetch(remote.get(), nullptr, &options, "bisectd: fetch"), "fetch " + url, ErrorCode::unreachable));
  follow_remote_head(m_repo.get(), remote.get());
  bool received = git_remote_stats(remote.get())->received_objects > 0;
  std::error_code ec;
  if (received || !std::filesystem::exists(git_dir() / "objects" / "info" / "commit-graph", ec)) {
    BISECTD_TRY(write_commit_graph());
  }
  return {};
}

// A network origin: `git fetch` in a child under `limits`, then this handle is reopened so that it sees the packs
// and refs git wrote. (origin's HEAD is followed at clone time only: nothing here reads a mirror's HEAD.)
Status Repository::fetch_with_git(const std::string& url, const TransferLimits& limits) {
  auto dir = git_dir();
  BISECTD_TRY_ASSIGN(auto before, refs_snapshot(m_repo.get()));
  BISECTD_TRY(run_transfer({"--git-dir=" + dir.string(), "fetch", "--prune", "origin"}, limits, "fetch " + url));
  BISECTD_TRY_ASSIGN(auto reopened, open(dir));
  *this = std::move(reopened);
  BISECTD_TRY_ASSIGN(auto after, refs_snapshot(m_repo.get()));
  std::error_code ec;
  if (after != before || !std::filesystem::exists(dir / "objects" / "info" / "commit-graph", ec)) {
    BISECTD_TRY(write_commit_graph());
  }
  return {};
}

Status Repository::write_commit_graph() { return detail::write_commit_graph(m_repo.get()); }

Result<std::string> Repository::resolve(const std::string& rev) {
  BISECTD_TRY_ASSIGN(auto commit, lookup_commit(m_repo.get(), rev));
  return to_hex(*git_commit_id(commit.get()));
}

Result<std::map<std::string, std::string>> Repository::branch_heads() {
  git_reference_iterator* raw = nullptr;
  BISECTD_TRY(check(git_reference_iterator_glob_new(&raw, m_repo.get(), "refs/heads/*"), "list branches"));
  RefIteratorPtr iterator(raw);
  std::map<std::string, std::string> heads;
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, iterator.get()) == 0) {
    ReferencePtr owned(ref);
    git_object* peeled = nullptr;
    if (git_reference_peel(&peeled, ref, GIT_OBJECT_COMMIT) != 0) {
      continue; // a branch pointing at a non-commit: not a head we can test
    }
    ObjectPtr owned_object(peeled);
    std::string name = git_reference_name(ref);
    heads.emplace(name.substr(std::string_view("refs/heads/").size()), to_hex(*git_object_id(peeled)));
  }
  return heads;
}

Result<std::string> Repository::merge_base(const std::string& a, const std::string& b) {
  BISECTD_TRY_ASSIGN(auto left, lookup_commit(m_repo.get(), a));
  BISECTD_TRY_ASSIGN(auto right, lookup_commit(m_repo.get(), b));
  git_oid base;
  BISECTD_TRY(check(git_merge_base(&base, m_repo.get(), git_commit_id(left.get()), git_commit_id(right.get())),
                    "merge base of " + a + " and " + b));
  return to_hex(base);
}

Result<std::optional<std::pair<std::string, std::string>>> Repository::merged_range(const std::string& sha) {
  BISECTD_TRY_ASSIGN(auto commit, lookup_commit(m_repo.get(), sha));
  if (git_commit_parentcount(commit.get()) < 2) {
    return std::nullopt;
  }
  std::string first = to_hex(*git_commit_parent_id(commit.get(), 0));
  std::string second = to_hex(*git_commit_parent_id(commit.get(), 1));
  BISECTD_TRY_ASSIGN(auto base, merge_base(first, second));
  if (base == second) {
    return std::nullopt;
  }
  return std::pair{base, second};
}

Result<bool> Repository::is_ancestor(const std::string& ancestor, const std::string& descendant) {
  BISECTD_TRY_ASSIGN(auto old_commit, lookup_commit(m_repo.get(), ancestor));
  BISECTD_TRY_ASSIGN(auto new_commit, lookup_commit(m_repo.get(), descendant));
  const git_oid* old_id = git_commit_id(old_commit.get());
  const git_oid* new_id = git_commit_id(new_commit.get());
  if (git_oid_equal(old_id, new_id) != 0) {
    return true;
  }
  int rc = git_graph_descendant_of(m_repo.get(), new_id, old_id);
  BISECTD_TRY(check(rc, "is " + ancestor + " an ancestor of " + descendant));
  return rc == 1;
}

std::filesystem::path Repository::git_dir() const { return git_repository_path(m_repo.get()); }

} // namespace bisectd::vcs
