#include "fakes/fake_repo.hpp"

#include <algorithm>
#include <deque>
#include <set>

namespace bisectd::test {

std::string FakeRepo::sha_of(const std::string& name) {
  auto sha = name;
  sha.resize(40, 'f');
  return sha;
}

std::string FakeRepo::add(const std::string& name, const std::vector<std::string>& parents, const std::string& subject,
                          const std::vector<std::string>& paths) {
  Commit c;
  c.info.sha = sha_of(name);
  for (const auto& p : parents) {
    c.info.parents.push_back(p.size() == 40 ? p : sha_of(p));
  }
  c.info.subject = subject.empty() ? "commit " + name : subject;
  c.info.author_name = "Jane Dev";
  c.info.author_email = "jane@example.org";
  c.info.committer_name = "Jane Dev";
  c.info.committer_email = "jane@example.org";
  c.paths = paths;
  m_commits[c.info.sha] = c;
  return c.info.sha;
}

std::vector<std::string> FakeRepo::line(const std::string& prefix, int n, const std::string& base) {
  std::vector<std::string> shas;
  std::string parent = base;
  for (int i = 0; i < n; ++i) {
    auto sha = add(prefix + std::to_string(i), parent.empty() ? std::vector<std::string>{} : std::vector{parent});
    shas.push_back(sha);
    parent = sha;
  }
  return shas;
}

Result<const FakeRepo::Commit*> FakeRepo::find(const std::string& sha) const {
  auto found = m_commits.find(sha);
  if (found == m_commits.end()) {
    return make_error(ErrorCode::not_found, "unknown revision '" + sha + "'");
  }
  return &found->second;
}

Result<std::string> FakeRepo::resolve(const std::string& rev) {
  if (auto branch = m_branches.find(rev); branch != m_branches.end()) {
    return branch->second;
  }
  for (const auto& [sha, commit] : m_commits) {
    if (rev.size() >= 4 && sha.starts_with(rev)) {
      return sha;
    }
  }
  return make_error(ErrorCode::not_found, "unknown revision '" + rev + "'");
}

Result<vcs::CommitInfo> FakeRepo::commit(const std::string& sha) {
  BISECTD_TRY_ASSIGN(auto full, resolve(sha));
  BISECTD_TRY_ASSIGN(const auto* c, find(full));
  return c->info;
}

Result<std::vector<std::string>> FakeRepo::first_parent_chain(const std::string& good, const std::string& bad) {
  std::vector<std::string> chain{bad};
  while (chain.back() != good) {
    BISECTD_TRY_ASSIGN(const auto* c, find(chain.back()));
    if (c->info.parents.empty() || chain.size() > m_commits.size()) {
      return make_error(ErrorCode::invalid_input, good + " is not on the first-parent chain of " + bad);
    }
    chain.push_back(c->info.parents.front());
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

Result<bool> FakeRepo::is_ancestor(const std::string& ancestor, const std::string& descendant) {
  std::deque<std::string> todo{descendant};
  std::set<std::string> seen;
  while (!todo.empty()) {
    auto sha = todo.front();
    todo.pop_front();
    if (sha == ancestor) {
      return true;
    }
    if (!seen.insert(sha).second) {
      continue;
    }
    BISECTD_TRY_ASSIGN(const auto* c, find(sha));
    todo.insert(todo.end(), c->info.parents.begin(), c->info.parents.end());
  }
  return false;
}

Result<std::string> FakeRepo::merge_base(const std::string& a, const std::string& b) {
  std::string base = b;
  for (std::size_t hops = 0; hops <= m_commits.size(); ++hops) {
    BISECTD_TRY_ASSIGN(bool shared, is_ancestor(base, a));
    if (shared) {
      return base;
    }
    BISECTD_TRY_ASSIGN(const auto* c, find(base));
    if (c->info.parents.empty()) {
      break;
    }
    base = c->info.parents.front();
  }
  return make_error(ErrorCode::not_found, "no merge base of " + a + " and " + b);
}

Result<std::optional<std::pair<std::string, std::string>>> FakeRepo::merged_range(const std::string& sha) {
  BISECTD_TRY_ASSIGN(const auto* c, find(sha));
  if (c->info.parents.size() < 2) {
    return std::optional<std::pair<std::string, std::string>>();
  }
  const auto& first = c->info.parents[0];
  const auto& tip = c->info.parents[1];
  BISECTD_TRY_ASSIGN(bool merged_already, is_ancestor(tip, first));
  if (merged_already) {
    return std::optional<std::pair<std::string, std::string>>();
  }
  // The merge base: the first commit of the branch tip's first-parent line that the first parent contains.
  std::string base = tip;
  for (std::size_t hops = 0; hops <= m_commits.size(); ++hops) {
    BISECTD_TRY_ASSIGN(bool shared, is_ancestor(base, first));
    if (shared) {
      return std::optional(std::pair{base, tip});
    }
    BISECTD_TRY_ASSIGN(const auto* b, find(base));
    if (b->info.parents.empty()) {
      break;
    }
    base = b->info.parents.front();
  }
  return make_error(ErrorCode::not_found, "no merge base for " + sha);
}

Result<std::vector<std::string>> FakeRepo::changed_paths(const std::string& sha) {
  BISECTD_TRY_ASSIGN(const auto* c, find(sha));
  return c->paths;
}

// One line per changed path, each a one-line change, as the fake patch() has them.
Result<std::string> FakeRepo::diffstat(const std::string& sha) {
  BISECTD_TRY_ASSIGN(const auto* c, find(sha));
  std::string text;
  for (const auto& path : c->paths) {
    text += " " + path + " | 2 +-\n";
  }
  auto n = std::to_string(c->paths.size());
  bool one = c->paths.size() == 1;
  return text + " " + n + (one ? " file changed, " : " files changed, ") + n + (one ? " insertion(+), " : " insertions(+), ") +
         n + (one ? " deletion(-)\n" : " deletions(-)\n");
}

Result<std::string> FakeRepo::patch(const std::string& sha) {
  BISECTD_TRY_ASSIGN(const auto* c, find(sha));
  std::string text = "From " + sha + "\nSubject: " + c->info.subject + "\n---\n";
  for (const auto& path : c->paths) {
    text += "diff --git a/" + path + " b/" + path + "\n@@ -1 +1 @@\n-int x = 1;\n+int x = 2;\n";
  }
  return text;
}

Status FakeRepo::checkout(const std::string& sha, const std::filesystem::path&) {
  BISECTD_TRY(find(sha));
  m_checkouts.push_back(sha);
  return {};
}

Result<std::string> FakeRepo::revert_onto(const std::string& culprit, const std::string& onto) {
  BISECTD_TRY(find(culprit));
  BISECTD_TRY(find(onto));
  return add("revert-" + culprit.substr(0, 8), {onto}, "Revert culprit");
}

FakeRepo& FakeTrees::repo(const std::string& name) {
  std::lock_guard lock(m_mutex);
  auto& slot = m_repos[name];
  if (!slot) {
    slot = std::make_unique<FakeRepo>();
  }
  return *slot;
}

Status FakeTrees::mirror(const std::string& name, const std::string&) {
  (void)repo(name);
  return {};
}

Result<std::map<std::string, std::string>> FakeTrees::fetch(const std::string& name) { return repo(name).branches(); }

Status FakeTrees::with_repo(const std::string& name, const std::function<Status(vcs::Repo&)>& action) {
  return action(repo(name));
}

std::mutex& FakeTrees::worktree_lock(const std::string& name) {
  std::lock_guard lock(m_mutex);
  auto& slot = m_locks[name];
  if (!slot) {
    slot = std::make_unique<std::mutex>();
  }
  return *slot;
}

std::filesystem::path FakeTrees::mirror_dir(const std::string& name) const { return m_root / "mirrors" / name; }

std::filesystem::path FakeTrees::worktree_dir(const std::string& name) const { return m_root / "worktrees" / name; }

} // namespace bisectd::test
