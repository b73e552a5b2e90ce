// What a commit changed: paths, a mailable patch, and a revert of it on top of another commit.
#include "vcs/commit_message.hpp"
#include "vcs/git_handle.hpp"
#include "vcs/repository.hpp"

#include <algorithm>
#include <array>
#include <ctime>

namespace bisectd::vcs {

using namespace detail;

namespace {

// The diff of `commit` against its first parent (against the empty tree for a root commit).
Result<DiffPtr> diff_first_parent(git_repository* repo, git_commit* commit) {
  git_tree* raw_tree = nullptr;
  std::string sha = to_hex(*git_commit_id(commit));
  BISECTD_TRY(check(git_commit_tree(&raw_tree, commit), "tree of " + sha));
  TreePtr tree(raw_tree);
  BISECTD_TRY_ASSIGN(auto parent_tree, first_parent_tree(commit));
  git_diff* raw_diff = nullptr;
  BISECTD_TRY(check(git_diff_tree_to_tree(&raw_diff, repo, parent_tree.get(), tree.get(), nullptr), "diff of " + sha));
  return DiffPtr(raw_diff);
}

// "Tue, 3 Feb 2009 10:20:30 +0100" in the signature's own time zone, like git's Date: lines.
std::string signature_date(const git_time& when) {
  std::time_t local = static_cast<std::time_t>(when.time + static_cast<std::int64_t>(when.offset) * 60);
  std::tm parts{};
  gmtime_r(&local, &parts);
  std::array<char, 64> text{};
  std::strftime(text.data(), text.size(), "%a, %d %b %Y %H:%M:%S", &parts);
  int offset = when.offset < 0 ? -when.offset : when.offset;
  std::array<char, 16> zone{};
  std::snprintf(zone.data(), zone.size(), " %c%02d%02d", when.offset < 0 ? '-' : '+', offset / 60, offset % 60);
  return std::string(text.data()) + zone.data();
}

Result<std::string> stats_text(git_diff* diff, const std::string& sha, git_diff_stats_format_t format) {
  git_diff_stats* raw_stats = nullptr;
  BISECTD_TRY(check(git_diff_get_stats(&raw_stats, diff), "diffstat of " + sha));
  DiffStatsPtr stats(raw_stats);
  Buf stat_text;
  BISECTD_TRY(check(git_diff_stats_to_buf(stat_text.get(), stats.get(), format, 72), "diffstat of " + sha));
  return stat_text.str();
}

Result<std::string> diff_text(git_diff* diff, const std::string& sha) {
  BISECTD_TRY_ASSIGN(auto stat_text, stats_text(diff, sha,
                                                static_cast<git_diff_stats_format_t>(GIT_DIFF_STATS_FULL |
                                                                                     GIT_DIFF_STATS_INCLUDE_SUMMARY)));
  Buf patch_text;
  BISECTD_TRY(check(git_diff_to_buf(patch_text.get(), diff, GIT_DIFF_FORMAT_PATCH), "patch of " + sha));
  return stat_text + "\n" + patch_text.str();
}

// The paths of the index's conflicts, sorted.
std::vector<std::string> conflict_paths(git_index* index) {
  std::vector<std::string> paths;
  git_index_conflict_iterator* iterator = nullptr;
  if (git_index_conflict_iterator_new(&iterator, index) != 0) {
    return paths;
  }
  const git_index_entry *ancestor = nullptr, *ours = nullptr, *theirs = nullptr;
  while (git_index_conflict_next(&ancestor, &ours, &theirs, iterator) == 0) {
    const git_index_entry* any = ours != nullptr ? ours : (theirs != nullptr ? theirs : ancestor);
    paths.emplace_back(any->path);
  }
  git_index_conflict_iterator_free(iterator);
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Writes `index` as a tree and commits it on top of `parent` (no ref moves); returns the new sha.
Result<std::string> commit_index(git_repository* repo, git_index* index, const git_commit* parent,
                                 const std::string& message) {
  git_oid tree_id;
  BISECTD_TRY(check(git_index_write_tree_to(&tree_id, index, repo), "write tree"));
  git_tree* raw_tree = nullptr;
  BISECTD_TRY(check(git_tree_lookup(&raw_tree, repo, &tree_id), "tree"));
  TreePtr tree(raw_tree);
  git_signature* raw_signature = nullptr;
  BISECTD_TRY(check(git_signature_now(&raw_signature, "bisectd", "bisectd@localhost"), "signature"));
  SignaturePtr signature(raw_signature);
  const git_commit* parents[] = {parent};
  git_oid commit_id;
  BISECTD_TRY(check(git_commit_create(&commit_id, repo, nullptr, signature.get(), signature.get(), nullptr,
                                      message.c_str(), tree.get(), 1, parents),
                    "create commit"));
  return to_hex(commit_id);
}

} // namespace

Result<std::vector<std::string>> Repository::changed_paths(const std::string& sha) {
  BISECTD_TRY_ASSIGN(auto commit, lookup_commit(m_repo.get(), sha));
  BISECTD_TRY_ASSIGN(auto diff, diff_first_parent(m_repo.get(), commit.get()));
  std::vector<std::string> paths;
  std::size_t count = git_diff_num_deltas(diff.get());
  for (std::size_t i = 0; i < count; ++i) {
    const git_diff_delta* delta = git_diff_get_delta(diff.get(), i);
    paths.emplace_back(delta->status == GIT_DELTA_DELETED ? delta->old_file.path : delta->new_file.path);
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

Result<std::string> Repository::patch(const std::string& sha) {
  BISECTD_TRY_ASSIGN(auto commit, lookup_commit(m_repo.get(), sha));
  std::string full = to_hex(*git_commit_id(commit.get()));
  BISECTD_TRY_ASSIGN(auto diff, diff_first_parent(m_repo.get(), commit.get()));
  BISECTD_TRY_ASSIGN(auto diff_body, diff_text(diff.get(), full));
  const git_signature* author = git_commit_author(commit.get());
  const char* raw_message = git_commit_message(commit.get());
  ParsedMessage message = parse_message(raw_message != nullptr ? raw_message : "");
  std::string out = "From " + full + " Mon Sep 17 00:00:00 2001\n";
  out += "From: " + std::string(author->name) + " <" + author->email + ">\n";
  out += "Date: " + signature_date(author->when) + "\n";
  out += "Subject: [PATCH] " + message.subject + "\n\n";
  if (!message.body.empty()) {
    out += message.body + "\n";
  }
  out += "---\n" + diff_body;
  return out;
}

Result<std::string> Repository::diffstat(const std::string& sha) {
  BISECTD_TRY_ASSIGN(auto commit, lookup_commit(m_repo.get(), sha));
  std::string full = to_hex(*git_commit_id(commit.get()));
  BISECTD_TRY_ASSIGN(auto diff, diff_first_parent(m_repo.get(), commit.get()));
  // As `git show --stat` does: a moved file is one "old => new" line, not a deletion and an addition.
  git_diff_find_options find{};
  BISECTD_TRY(check(git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION), "renames of " + full));
  find.flags = GIT_DIFF_FIND_RENAMES;
  BISECTD_TRY(check(git_diff_find_similar(diff.get(), &find), "renames of " + full));
  return stats_text(diff.get(), full, GIT_DIFF_STATS_FULL);
}

Result<std::string> Repository::revert_onto(const std::string& culprit, const std::string& onto) {
  BISECTD_TRY_ASSIGN(auto bad, lookup_commit(m_repo.get(), culprit));
  BISECTD_TRY_ASSIGN(auto base, lookup_commit(m_repo.get(), onto));
  std::string what = "revert " + culprit + " onto " + onto;
  unsigned mainline = git_commit_parentcount(bad.get()) > 1 ? 1 : 0;
  git_merge_options merge_options = GIT_MERGE_OPTIONS_INIT;
  git_index* raw_index = nullptr;
  BISECTD_TRY(
    check(git_revert_commit(&raw_index, m_repo.get(), bad.get(), base.get(), mainline, &merge_options), what));
  IndexPtr index(raw_index);
  if (git_index_has_conflicts(index.get()) != 0) {
    std::vector<std::string> paths = conflict_paths(index.get());
    std::string list;
    for (const auto& path : paths) {
      list += (list.empty() ? "" : ", ") + path;
    }
    return make_error(ErrorCode::conflict, what + ": conflict in " + list);
  }
  const char* subject = git_commit_summary(bad.get());
  std::string message = "Revert \"" + std::string(subject != nullptr ? subject : "") + "\"\n\nThis reverts commit " +
                        to_hex(*git_commit_id(bad.get())) + ".\n";
  auto created = commit_index(m_repo.get(), index.get(), base.get(), message);
  if (!created) {
    return std::unexpected(created.error().context(what));
  }
  return created;
}

} // namespace bisectd::vcs
