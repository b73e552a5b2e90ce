#include "base/strings.hpp"
#include "git_fixture.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using bisectd::ErrorCode;
using bisectd::test::GitFixture;
using bisectd::vcs::CommitInfo;
using bisectd::vcs::Repository;

namespace {

std::set<std::string> shas_of(const std::vector<CommitInfo>& commits) {
  std::set<std::string> out;
  for (const auto& c : commits) {
    out.insert(c.sha);
  }
  return out;
}

std::set<std::string> rev_list(GitFixture& fixture, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"rev-list"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto lines = bisectd::base::split_lines(fixture.git(argv));
  return {lines.begin(), lines.end()};
}

// Every commit is listed before all of its parents that are in the list.
bool topological(const std::vector<CommitInfo>& commits) {
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < commits.size(); ++i) {
    position[commits[i].sha] = i;
  }
  return std::all_of(commits.begin(), commits.end(), [&](const CommitInfo& c) {
    return std::all_of(c.parents.begin(), c.parents.end(),
                       [&](const std::string& p) { return !position.contains(p) || position[p] > position[c.sha]; });
  });
}

} // namespace

TEST_CASE("vcs::Repository::first_parent_chain follows first parents only", "[vcs]") {
  auto& [fixture, h] = bisectd::test::shared_history();
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());

  CHECK(repo->first_parent_chain(h.a, h.d).value() == std::vector<std::string>{h.a, h.b, h.c, h.m, h.d});
  CHECK(repo->first_parent_chain("master~3", "master").value() == std::vector<std::string>{h.b, h.c, h.m, h.d});
  CHECK(repo->first_parent_chain(h.b, h.b).value() == std::vector<std::string>{h.b});

  auto off_chain = repo->first_parent_chain(h.t1, h.d);
  REQUIRE_FALSE(off_chain.has_value());
  CHECK(off_chain.error().code == ErrorCode::invalid_input);
  CHECK(off_chain.error().message.find(h.t1) != std::string::npos);
  CHECK(off_chain.error().message.find(h.d) != std::string::npos);
  CHECK_FALSE(repo->first_parent_chain(h.d, h.a).has_value()); // reversed: good newer than bad
}

TEST_CASE("vcs::Repository::range matches git rev-list", "[vcs]") {
  auto& [fixture, h] = bisectd::test::shared_history();
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());

  auto all = repo->range({h.a}, h.d);
  REQUIRE(all.has_value());
  CHECK(shas_of(*all) == rev_list(fixture, {h.d, "^" + h.a}));
  CHECK(all->size() == 6);
  CHECK(all->front().sha == h.d);
  CHECK(topological(*all));
  auto merge = std::find_if(all->begin(), all->end(), [&](const CommitInfo& c) { return c.sha == h.m; });
  REQUIRE(merge != all->end());
  CHECK(merge->parents == std::vector<std::string>{h.c, h.t2});
  CHECK(merge->subject == "Merge branch 'topic'");

  auto two_goods = repo->range({h.c, h.t1}, h.d);
  REQUIRE(two_goods.has_value());
  CHECK(shas_of(*two_goods) == rev_list(fixture, {h.d, "^" + h.c, "^" + h.t1}));
  CHECK(shas_of(*two_goods) == std::set<std::string>{h.t2, h.m, h.d});
  CHECK(topological(*two_goods));

  auto nodes = repo->range_graph({h.c, h.t1}, h.d); // no commit-graph here: the revwalk path
  REQUIRE(nodes.has_value());
  REQUIRE(nodes->size() == two_goods->size());
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    CHECK((*nodes)[i].sha == (*two_goods)[i].sha);
    CHECK((*nodes)[i].parents == (*two_goods)[i].parents);
  }

  CHECK(repo->range({h.d}, h.d).value().empty());
  CHECK_FALSE(repo->range({"nope"}, h.d).has_value());
}

TEST_CASE("vcs::Repository::merge_base and is_ancestor", "[vcs]") {
  auto& [fixture, h] = bisectd::test::shared_history();
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  CHECK(repo->merge_base(h.c, h.t2).value() == h.b);
  CHECK(repo->merge_base(h.d, h.t1).value() == h.t1);
  CHECK(repo->is_ancestor(h.t1, h.d).value());
  CHECK(repo->is_ancestor(h.d, h.d).value());
  CHECK_FALSE(repo->is_ancestor(h.c, h.t2).value());
  CHECK_FALSE(repo->is_ancestor(h.d, h.a).value());
}

TEST_CASE("vcs::Repository::merged_range gives the merged branch to recurse into", "[vcs]") {
  auto& [fixture, h] = bisectd::test::shared_history();
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  auto range = repo->merged_range(h.m);
  REQUIRE(range.has_value());
  REQUIRE(range->has_value());
  CHECK((*range)->first == h.b);                            // merge base of C and T2
  CHECK((*range)->second == h.t2);                          // the branch tip
  CHECK_FALSE(repo->merged_range(h.d).value().has_value()); // not a merge
  CHECK_FALSE(repo->merged_range("nope").has_value());
}

TEST_CASE("vcs::Repository::commit reads metadata and trailers", "[vcs]") {
  GitFixture fixture;
  fixture.commit("root", {{"a.txt", "1\n"}});
  std::string sha = fixture.commit("mm: fix the thing\n\n"
                                   "Longer explanation\nover two lines.\n\n"
                                   "Not-a-trailer: this paragraph is not the last one\nbecause text follows.\n\n"
                                   "Signed-off-by: Jane Doe <jane@example.org>\n"
                                   "Reviewed-by: Bob <bob@example.org>\n"
                                   "Link: https://lore.kernel.org/r/123\n",
                                   {{"a.txt", "2\n"}});
  std::string plain = fixture.commit("subject only", {{"a.txt", "3\n"}});
  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());

  auto info = repo->commit(sha);
  REQUIRE(info.has_value());
  CHECK(info->sha == sha);
  CHECK(info->subject == "mm: fix the thing");
  CHECK(bisectd::base::starts_with(info->body, "Longer explanation\nover two lines.\n\nNot-a-trailer:"));
  CHECK(bisectd::base::ends_with(info->body, "Link: https://lore.kernel.org/r/123"));
  CHECK(info->author_name == "Test Author");
  CHECK(info->author_email == "author@example.org");
  CHECK(info->committer_email == "author@example.org");
  CHECK(info->author_time == 1700000000 + 60 * 2);
  CHECK(info->commit_time == info->author_time);
  REQUIRE(info->trailers.size() == 3);
  CHECK(info->trailers[0].key == "Signed-off-by");
  CHECK(info->trailers[0].value == "Jane Doe <jane@example.org>");
  CHECK(info->trailers[1].key == "Reviewed-by");
  CHECK(info->trailers[2].value == "https://lore.kernel.org/r/123");
  CHECK(info->parents.size() == 1);

  auto bare = repo->commit(plain);
  REQUIRE(bare.has_value());
  CHECK(bare->subject == "subject only");
  CHECK(bare->body.empty());
  CHECK(bare->trailers.empty());

  auto missing = repo->commit(std::string(40, 'f'));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::not_found);
}
