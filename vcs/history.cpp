// Commit metadata and the commit lists bisection works on (first-parent chain, full range).
#include "vcs/commit_graph.hpp"
#include "vcs/commit_message.hpp"
#include "vcs/git_handle.hpp"
#include "vcs/repository.hpp"

#include <algorithm>

namespace bisectd::vcs {

using namespace detail;

namespace {

CommitInfo describe(const git_commit* commit) {
  CommitInfo info;
  info.sha = to_hex(*git_commit_id(commit));
  unsigned count = git_commit_parentcount(commit);
  info.parents.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    info.parents.push_back(to_hex(*git_commit_parent_id(commit, i)));
  }
  const git_signature* author = git_commit_author(commit);
  const git_signature* committer = git_commit_committer(commit);
  info.author_name = author->name;
  info.author_email = author->email;
  info.author_time = author->when.time;
  info.committer_name = committer->name;
  info.committer_email = committer->email;
  info.commit_time = committer->when.time;
  const char* message = git_commit_message(commit);
  ParsedMessage parsed = parse_message(message != nullptr ? message : "");
  info.subject = std::move(parsed.subject);
  info.body = std::move(parsed.body);
  info.trailers = std::move(parsed.trailers);
  return info;
}

// `git rev-list bad ^goods` by libgit2's revwalk (reads every commit object it passes).
Result<std::vector<git_oid>> walk_range(git_repository* repo, const git_oid& bad, const std::vector<git_oid>& goods) {
  git_revwalk* raw = nullptr;
  BISECTD_TRY(check(git_revwalk_new(&raw, repo), "range: revwalk"));
  RevwalkPtr walk(raw);
  BISECTD_TRY(check(git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME), "range: sorting"));
  BISECTD_TRY(check(git_revwalk_push(walk.get(), &bad), "range: bad " + to_hex(bad)));
  for (const auto& good : goods) {
    BISECTD_TRY(check(git_revwalk_hide(walk.get(), &good), "range: good " + to_hex(good)));
  }
  std::vector<git_oid> ids;
  git_oid id;
  int rc = 0;
  while ((rc = git_revwalk_next(&id, walk.get())) == 0) {
    ids.push_back(id);
  }
  if (rc != GIT_ITEROVER) {
    return std::unexpected(git_failure(rc, "range " + to_hex(bad)));
  }
  return ids;
}

// How often the first-parent walk re-checks that it can still reach `good` (keeps a miss cheap).
constexpr std::size_t k_reachability_check_every = 1024;

} // namespace

Result<CommitInfo> Repository::commit(const std::string& sha) {
  BISECTD_TRY_ASSIGN(auto found, lookup_commit(m_repo.get(), sha));
  return describe(found.get());
}

Result<std::vector<std::string>> Repository::first_parent_chain(const std::string& good, const std::string& bad) {
  BISECTD_TRY_ASSIGN(auto good_commit, lookup_commit(m_repo.get(), good));
  BISECTD_TRY_ASSIGN(auto current, lookup_commit(m_repo.get(), bad));
  const git_oid good_id = *git_commit_id(good_commit.get());
  auto not_on_chain = [&] {
    return make_error(ErrorCode::invalid_input, "good " + good + " is not on the first-parent chain of bad " + bad);
  };
  std::vector<std::string> chain;
  while (true) {
    const git_oid* id = git_commit_id(current.get());
    chain.push_back(to_hex(*id));
    if (git_oid_equal(id, &good_id) != 0) {
      break;
    }
    if (git_commit_parentcount(current.get()) == 0) {
      return not_on_chain();
    }
    if (chain.size() % k_reachability_check_every == 1 && git_graph_descendant_of(m_repo.get(), id, &good_id) != 1) {
      return not_on_chain();
    }
    git_commit* parent = nullptr;
    BISECTD_TRY(check(git_commit_parent(&parent, current.get(), 0), "first parent of " + chain.back()));
    current.reset(parent);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

namespace {

// The commits of `bad ^goods...`, children first: through the commit-graph when it covers the tips,
// else by libgit2's revwalk. `graph`/`positions` are set when the graph was used.
struct RangeIds {
  std::vector<git_oid> ids;
  std::optional<CommitGraph> graph;
  std::vector<std::uint32_t> positions;
};

Result<RangeIds> range_ids(git_repository* repo, const std::vector<std::string>& goods, const std::string& bad) {
  BISECTD_TRY_ASSIGN(auto bad_commit, lookup_commit(repo, bad));
  const git_oid bad_id = *git_commit_id(bad_commit.get());
  std::vector<git_oid> good_ids;
  for (const auto& good : goods) {
    BISECTD_TRY_ASSIGN(auto good_commit, lookup_commit(repo, good));
    good_ids.push_back(*git_commit_id(good_commit.get()));
  }
  RangeIds range;
  range.graph = CommitGraph::load(std::filesystem::path(git_repository_path(repo)) / "objects");
  auto positions = range.graph ? graph_range(*range.graph, bad_id, good_ids) : std::nullopt;
  if (!positions) {
    range.graph.reset();
    BISECTD_TRY_ASSIGN(range.ids, walk_range(repo, bad_id, good_ids));
    return range;
  }
  range.positions = std::move(*positions);
  range.ids.reserve(range.positions.size());
  for (std::uint32_t pos : range.positions) {
    range.ids.push_back(range.graph->oid(pos));
  }
  return range;
}

} // namespace

Result<std::vector<CommitInfo>> Repository::range(const std::vector<std::string>& goods, const std::string& bad) {
  BISECTD_TRY_ASSIGN(auto range, range_ids(m_repo.get(), goods, bad));
  std::vector<CommitInfo> commits;
  commits.reserve(range.ids.size());
  for (const auto& id : range.ids) {
    git_commit* found = nullptr;
    BISECTD_TRY(check(git_commit_lookup(&found, m_repo.get(), &id), "range: commit " + to_hex(id)));
    CommitPtr owned(found);
    commits.push_back(describe(owned.get()));
  }
  return commits;
}

Result<std::vector<CommitNode>> Repository::range_graph(const std::vector<std::string>& goods, const std::string& bad) {
  BISECTD_TRY_ASSIGN(auto range, range_ids(m_repo.get(), goods, bad));
  std::vector<CommitNode> nodes(range.ids.size());
  std::vector<std::uint32_t> parents;
  for (std::size_t i = 0; i < range.ids.size(); ++i) {
    nodes[i].sha = to_hex(range.ids[i]);
    if (range.graph && range.graph->parents(range.positions[i], parents)) {
      for (std::uint32_t parent : parents) {
        nodes[i].parents.push_back(to_hex(range.graph->oid(parent)));
      }
      continue;
    }
    git_commit* found = nullptr;
    BISECTD_TRY(check(git_commit_lookup(&found, m_repo.get(), &range.ids[i]), "range: commit " + nodes[i].sha));
    CommitPtr owned(found);
    for (unsigned p = 0; p < git_commit_parentcount(found); ++p) {
      nodes[i].parents.push_back(to_hex(*git_commit_parent_id(found, p)));
    }
  }
  return nodes;
}

} // namespace bisectd::vcs
