#include "bisect/midpoint.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

using bisectd::bisect::DagNode;
using bisectd::bisect::find_midpoint;
using bisectd::bisect::make_dag;

namespace {

// Reachable count of `start` within `nodes` (itself included), by plain DFS.
std::size_t reach(const std::vector<DagNode>& nodes, std::size_t start) {
  std::vector<bool> seen(nodes.size(), false);
  std::vector<std::size_t> stack{start};
  seen[start] = true;
  std::size_t count = 0;
  while (!stack.empty()) {
    std::size_t node = stack.back();
    stack.pop_back();
    ++count;
    for (std::size_t p : nodes[node].parents) {
      if (p < nodes.size() && !seen[p]) {
        seen[p] = true;
        stack.push_back(p);
      }
    }
  }
  return count;
}

std::size_t best_quality(const std::vector<DagNode>& nodes) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::size_t w = reach(nodes, i);
    best = std::max(best, std::min(w, nodes.size() - w));
  }
  return best;
}

// A small deterministic generator (LCG) so failures are reproducible.
struct Lcg {
  std::uint64_t state;
  std::size_t next(std::size_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state >> 33) % bound);
  }
};

// Git-like history: a mainline plus topic branches forked from earlier commits and merged back. Node i's
// parents are all < i; the list is then shuffled so find_midpoint must sort it itself.
std::vector<DagNode> random_history(std::size_t n, std::uint64_t seed, bool shuffle = true) {
  Lcg rng{seed};
  std::vector<DagNode> nodes(n);
  std::size_t tip = 0;
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t kind = rng.next(10);
    if (kind < 5) {
      nodes[i].parents = {tip};
      tip = i;
    } else if (kind < 8) {
      nodes[i].parents = {i - 1 - rng.next(std::min<std::size_t>(i, 8))};
    } else {
      std::size_t other = i - 1 - rng.next(std::min<std::size_t>(i, 30));
      nodes[i].parents = {tip, other};
      if (rng.next(20) == 0 && i > 2) {
        nodes[i].parents.push_back(rng.next(i)); // an octopus now and then
      }
      tip = i;
    }
  }
  if (!shuffle) {
    return nodes;
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) {
    order[i] = i;
  }
  for (std::size_t i = n; i > 1; --i) {
    std::swap(order[i - 1], order[rng.next(i)]);
  }
  std::vector<std::size_t> position(n);
  for (std::size_t i = 0; i < n; ++i) {
    position[order[i]] = i;
  }
  std::vector<DagNode> shuffled(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p : nodes[i].parents) {
      shuffled[position[i]].parents.push_back(position[p]);
    }
  }
  return shuffled;
}

// The best min(w, n - w) of a DAG whose parents all have smaller indices, with every weight computed
// exactly: reachability restricted to 64 nodes at a time, as bit masks, in index order.
std::size_t best_quality_by_blocks(const std::vector<DagNode>& nodes) {
  std::size_t n = nodes.size();
  std::vector<std::size_t> weight(n, 0);
  std::vector<std::uint64_t> mask(n);
  for (std::size_t block = 0; block < n; block += 64) {
    for (std::size_t i = 0; i < n; ++i) {
      mask[i] = (i >= block && i < block + 64) ? (std::uint64_t{1} << (i - block)) : 0;
      for (std::size_t p : nodes[i].parents) {
        mask[i] |= mask[p];
      }
      weight[i] += static_cast<std::size_t>(__builtin_popcountll(mask[i]));
    }
  }
  std::size_t best = 0;
  for (std::size_t w : weight) {
    best = std::max(best, std::min(w, n - w));
  }
  return best;
}

} // namespace

TEST_CASE("bisect::find_midpoint small shapes", "[bisect][midpoint]") {
  SECTION("empty list has no midpoint") { CHECK_FALSE(find_midpoint({}).has_value()); }
  SECTION("a single candidate is the bad commit itself") {
    auto mid = find_midpoint({DagNode{}});
    REQUIRE(mid);
    CHECK(mid->index == 0);
    CHECK(mid->weight == 1);
    CHECK(mid->total == 1);
  }
  SECTION("a linear chain splits in the middle") {
    // 0 <- 1 <- ... <- 9, listed newest first like rev-list
    std::vector<DagNode> nodes(10);
    for (std::size_t i = 0; i < 9; ++i) {
      nodes[i].parents = {i + 1};
    }
    auto mid = find_midpoint(nodes);
    REQUIRE(mid);
    CHECK(mid->weight == 5);
    CHECK(mid->index == 5); // the 5th oldest reaches exactly 5
  }
  SECTION("a merge counts shared ancestors once") {
    // root 0; branches 1-2 and 3-4 off 0; merge 5 = (2, 4); tip 6 on 5
    std::vector<DagNode> nodes{{}, {{0}}, {{1}}, {{0}}, {{3}}, {{2, 4}}, {{5}}};
    auto mid = find_midpoint(nodes);
    REQUIRE(mid);
    CHECK(mid->weight == reach(nodes, mid->index));
    CHECK(std::min(mid->weight, 7 - mid->weight) == 3);
  }
  SECTION("cycles are rejected") {
    std::vector<DagNode> nodes{{{1}}, {{0}}};
    CHECK_FALSE(find_midpoint(nodes).has_value());
  }
  SECTION("out-of-range and self parents are ignored") {
    std::vector<DagNode> nodes{{{0, 99}}, {{0}}, {{1, 1}}};
    auto mid = find_midpoint(nodes);
    REQUIRE(mid);
    CHECK(mid->weight == reach(nodes, mid->index));
    CHECK(std::min(mid->weight, 3 - mid->weight) == 1);
  }
}

TEST_CASE("bisect::find_midpoint matches brute force on random histories", "[bisect][midpoint]") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::size_t n = 2 + static_cast<std::size_t>(seed * 37 % 400);
    auto nodes = random_history(n, seed);
    auto mid = find_midpoint(nodes);
    INFO("seed " << seed << " n " << n);
    REQUIRE(mid);
    CHECK(mid->total == n);
    CHECK(mid->weight == reach(nodes, mid->index));
    CHECK(std::min(mid->weight, n - mid->weight) == best_quality(nodes));
  }
}

TEST_CASE("bisect::find_midpoint handles many merges quickly", "[bisect][midpoint]") {
  for (std::uint64_t seed : {7, 8}) {
    auto nodes = random_history(20000, seed);
    auto mid = find_midpoint(nodes);
    REQUIRE(mid);
    CHECK(mid->weight == reach(nodes, mid->index));
    // Same graph, unshuffled (parents before children), weighed exhaustively.
    CHECK(std::min(mid->weight, nodes.size() - mid->weight) ==
          best_quality_by_blocks(random_history(20000, seed, false)));
  }
}

TEST_CASE("bisect::make_dag maps ids and drops outside parents", "[bisect][midpoint]") {
  std::vector<std::string> ids{"c", "b", "a"};
  std::vector<std::vector<std::string>> parents{{"b", "x"}, {"a"}, {"good"}};
  auto nodes = make_dag(ids, parents);
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0].parents == std::vector<std::size_t>{1});
  CHECK(nodes[1].parents == std::vector<std::size_t>{2});
  CHECK(nodes[2].parents.empty());
}
