#pragma once
// git's bisection point (`git rev-list --bisect`): the candidate commit whose reachable count is closest
// to half of the candidates. Pure: works on indices, knows nothing about git.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::bisect {

struct DagNode {
  std::vector<std::size_t> parents; // indices into the node list; only parents inside the candidate set
};

struct Midpoint {
  std::size_t index = 0;  // into the node list
  std::size_t weight = 0; // nodes reachable from it within the set, itself included
  std::size_t total = 0;  // number of nodes
};

// `nodes` = the candidate commits (bad included, goods excluded), in any order. Returns the node whose
// reachable count w maximises min(w, total - w) (ties: any of them). Parent indices that are out of range
// or point at the node itself are ignored. nullopt when `nodes` is empty or its parent links form a cycle.
std::optional<Midpoint> find_midpoint(const std::vector<DagNode>& nodes);

// Builds the node list for find_midpoint from commit ids and their parents' ids (same order as `ids`);
// parents that are not in `ids` (the goods and beyond) are dropped.
std::vector<DagNode> make_dag(const std::vector<std::string>& ids,
                              const std::vector<std::vector<std::string>>& parent_ids);

} // namespace bisectd::bisect
