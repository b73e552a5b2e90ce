#include "base/strings.hpp"
#include "git_fixture.hpp"
#include "vcs/commit_graph.hpp"
#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

#include <set>

using bisectd::test::GitFixture;
using bisectd::vcs::Repository;
namespace detail = bisectd::vcs::detail;

namespace {

git_oid oid_of(const std::string& sha) {
  git_oid id;
  git_oid_fromstr(&id, sha.c_str());
  return id;
}

std::string hex(const git_oid& id) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, &id);
  return text;
}

std::set<std::string> lines(const std::string& text) {
  auto parts = bisectd::base::split_lines(text);
  return {parts.begin(), parts.end()};
}

} // namespace

TEST_CASE("vcs commit-graph: written by us, read by us and by git, same ranges", "[vcs]") {
  GitFixture fixture;
  auto h = bisectd::test::build_merge_history(fixture);
  // An octopus merge exercises the graph's EDGE list (parents beyond the second).
  fixture.git({"checkout", "-q", "-b", "o1", h.b});
  std::string o1 = fixture.commit("o1", {{"o1.txt", "1\n"}});
  fixture.git({"checkout", "-q", "-b", "o2", h.b});
  std::string o2 = fixture.commit("o2", {{"o2.txt", "1\n"}});
  fixture.git({"checkout", "-q", "master"});
  fixture.commit_merge_many({"o1", "o2"}, "octopus");
  std::string octopus = fixture.git({"rev-parse", "HEAD"});

  auto repo = Repository::open(fixture.origin());
  REQUIRE(repo.has_value());
  auto before = repo->range({h.a}, octopus); // no graph yet: libgit2's revwalk
  REQUIRE(before.has_value());
  REQUIRE(repo->write_commit_graph().has_value());
  fixture.git({"commit-graph", "verify"}); // git accepts the file

  auto graph = detail::CommitGraph::load(fixture.origin() / ".git" / "objects");
  REQUIRE(graph.has_value());
  CHECK(graph->size() == lines(fixture.git({"rev-list", "--all"})).size());
  auto pos = graph->find(oid_of(octopus));
  REQUIRE(pos.has_value());
  std::vector<std::uint32_t> parents;
  REQUIRE(graph->parents(*pos, parents));
  std::vector<std::string> parent_shas;
  for (auto p : parents) {
    parent_shas.push_back(hex(graph->oid(p)));
  }
  CHECK(parent_shas == std::vector<std::string>{h.d, o1, o2});
  CHECK(graph->commit_time(*pos) == std::stoll(fixture.git({"log", "-1", "--format=%ct", octopus})));
  CHECK(graph->generation(*pos) > graph->generation(parents[0]));
  CHECK_FALSE(graph->find(oid_of(std::string(40, '0'))).has_value());

  auto in_graph = detail::graph_range(*graph, oid_of(octopus), {oid_of(h.c), oid_of(o1)});
  REQUIRE(in_graph.has_value());
  std::set<std::string> got;
  for (auto p : *in_graph) {
    got.insert(hex(graph->oid(p)));
  }
  CHECK(got == lines(fixture.git({"rev-list", octopus, "^" + h.c, "^" + o1})));

  auto after = repo->range({h.a}, octopus); // now through the graph
  REQUIRE(after.has_value());
  REQUIRE(after->size() == before->size());
  std::set<std::string> before_set, after_set;
  for (std::size_t i = 0; i < after->size(); ++i) {
    before_set.insert((*before)[i].sha);
    after_set.insert((*after)[i].sha);
  }
  CHECK(after_set == before_set);
  CHECK(after->front().sha == octopus);
  CHECK(after->front().parents == parent_shas);

  auto nodes = repo->range_graph({h.a}, octopus);
  REQUIRE(nodes.has_value());
  REQUIRE(nodes->size() == after->size());
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    CHECK((*nodes)[i].sha == (*after)[i].sha);
    CHECK((*nodes)[i].parents == (*after)[i].parents);
  }
}
