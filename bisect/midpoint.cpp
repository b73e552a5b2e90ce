// find_midpoint follows git's do_find_bisection (bisect.c) and makes it cheaper in three ways:
// - single-parent nodes get weight(parent) + 1, as in git;
// - a merge's weight is weight(heaviest parent) + 1 + |what the other parents reach that it does not|,
//   counted by painting down from both sides in reverse topological order (the merge-base walk), which stops
//   as soon as no node reachable only from the other parents is pending, instead of git's full count;
// - nodes with a parent of weight ≥ total/2 are never counted: they reach more than half, so they are
//   strictly worse than that parent. The walk also stops once a merge is known to be that heavy.
// It returns at once when |2w − total| ≤ 1, the best possible split.
#include "bisect/midpoint.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <queue>
#include <unordered_map>

namespace bisectd::bisect {

namespace {

using Rank = std::uint32_t;

// The DAG relabelled in topological order (parents before children), parents in CSR form.
struct RankedDag {
  std::vector<std::size_t> original; // rank → input index
  std::vector<Rank> begin;           // parents of rank r: parents[begin[r] .. begin[r+1])
  std::vector<Rank> parents;

  [[nodiscard]] std::size_t size() const { return original.size(); }
};

// Valid, distinct parent indices of `node` (i).
std::vector<std::size_t> clean_parents(const std::vector<DagNode>& nodes, std::size_t i) {
  std::vector<std::size_t> out;
  for (std::size_t p : nodes[i].parents) {
    if (p < nodes.size() && p != i && std::find(out.begin(), out.end(), p) == out.end()) {
      out.push_back(p);
    }
  }
  return out;
}

// Kahn's algorithm from the roots; nullopt on a cycle.
std::optional<RankedDag> rank_nodes(const std::vector<DagNode>& nodes) {
  std::size_t n = nodes.size();
  std::vector<std::vector<std::size_t>> parents(n);
  std::vector<std::size_t> pending(n, 0);
  std::vector<std::vector<std::size_t>> children(n);
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    parents[i] = clean_parents(nodes, i);
    pending[i] = parents[i].size();
    for (std::size_t p : parents[i]) {
      children[p].push_back(i);
    }
    if (pending[i] == 0) {
      ready.push_back(i);
    }
  }
  RankedDag dag;
  std::vector<Rank> rank_of(n, 0);
  while (!ready.empty()) {
    std::size_t i = ready.front();
    ready.pop_front();
    rank_of[i] = static_cast<Rank>(dag.original.size());
    dag.original.push_back(i);
    for (std::size_t c : children[i]) {
      if (--pending[c] == 0) {
        ready.push_back(c);
      }
    }
  }
  if (dag.original.size() != n) {
    return std::nullopt;
  }
  dag.begin.reserve(n + 1);
  for (std::size_t i : dag.original) {
    dag.begin.push_back(static_cast<Rank>(dag.parents.size()));
    for (std::size_t p : parents[i]) {
      dag.parents.push_back(rank_of[p]);
    }
  }
  dag.begin.push_back(static_cast<Rank>(dag.parents.size()));
  return dag;
}

// Counts the nodes reachable from a merge's other parents but not from its chosen parent.
class Painter {
public:
  explicit Painter(const RankedDag& dag) : m_dag(dag), m_stamp(dag.size(), 0), m_flags(dag.size(), 0) {}

  // |R(others) \ R(main)|, or any value ≥ `cap` once the count reaches `cap`.
  std::size_t count_outside(Rank merge, Rank main, std::size_t cap) {
    ++m_epoch;
    m_heap = {};
    m_other_only_pending = 0;
    for (Rank i = m_dag.begin[merge]; i < m_dag.begin[merge + 1]; ++i) {
      paint(m_dag.parents[i], m_dag.parents[i] == main ? k_main : k_other);
    }
    std::size_t count = 0;
    while (m_other_only_pending > 0 && count < cap) {
      Rank node = m_heap.top();
      m_heap.pop();
      std::uint8_t flags = m_flags[node];
      if (flags == k_other) {
        --m_other_only_pending;
        ++count;
      }
      for (Rank i = m_dag.begin[node]; i < m_dag.begin[node + 1]; ++i) {
        paint(m_dag.parents[i], flags);
      }
    }
    return count;
  }

private:
  static constexpr std::uint8_t k_main = 1;
  static constexpr std::uint8_t k_other = 2;

  // Adds `flags` to `node`; queues it when first reached. A popped node is never repainted: only parents
  // (lower ranks) of popped nodes are painted, and pops come in decreasing rank.
  void paint(Rank node, std::uint8_t flags) {
    if (m_stamp[node] != m_epoch) {
      m_stamp[node] = m_epoch;
      m_flags[node] = 0;
    }
    std::uint8_t old = m_flags[node];
    std::uint8_t now = old | flags;
    if (now == old) {
      return;
    }
    m_flags[node] = now;
    if (old == 0) {
      m_heap.push(node);
    }
    m_other_only_pending += (now == k_other ? 1 : 0) - (old == k_other ? 1 : 0);
  }

  const RankedDag& m_dag;
  std::vector<std::uint32_t> m_stamp;
  std::vector<std::uint8_t> m_flags;
  std::uint32_t m_epoch = 0;
  std::priority_queue<Rank> m_heap;
  std::size_t m_other_only_pending = 0;
};

struct Search {
  const RankedDag& dag;
  Painter painter;
  std::vector<std::size_t> weight; // exact, or a lower bound ≥ total/2 for pruned ("heavy") nodes
  std::size_t best_rank = 0;
  std::size_t best_weight = 0;
  bool found = false;

  [[nodiscard]] std::size_t total() const { return dag.size(); }
  [[nodiscard]] bool heavy(std::size_t w) const { return 2 * w >= total(); }
  [[nodiscard]] std::size_t quality(std::size_t w) const { return std::min(w, total() - w); }

  // The weight of merge `r` (all parents light), or a heavy lower bound when it cannot beat the best.
  std::size_t merge_weight(Rank r) {
    Rank main = dag.parents[dag.begin[r]];
    for (Rank i = dag.begin[r]; i < dag.begin[r + 1]; ++i) {
      main = weight[dag.parents[i]] > weight[main] ? dag.parents[i] : main;
    }
    std::size_t best_quality = found ? quality(best_weight) : 0;
    std::size_t limit = std::max((total() + 1) / 2, total() - best_quality);
    std::size_t base = weight[main] + 1;
    std::size_t cap = limit > base ? limit - base : 0;
    return base + painter.count_outside(r, main, cap);
  }

  // Weighs rank `r`; true when it is an exact halfway point (nothing can beat it).
  bool visit(Rank r) {
    Rank first = dag.begin[r];
    Rank last = dag.begin[r + 1];
    for (Rank i = first; i < last; ++i) {
      if (heavy(weight[dag.parents[i]])) {
        weight[r] = weight[dag.parents[i]] + 1;
        return false;
      }
    }
    std::size_t w = last == first ? 1 : (last - first == 1 ? weight[dag.parents[first]] + 1 : merge_weight(r));
    weight[r] = w;
    if (!found || quality(w) > quality(best_weight)) {
      found = true;
      best_rank = r;
      best_weight = w;
    }
    std::size_t twice = 2 * w;
    return twice + 1 >= total() && twice <= total() + 1;
  }
};

} // namespace

std::optional<Midpoint> find_midpoint(const std::vector<DagNode>& nodes) {
  if (nodes.empty()) {
    return std::nullopt;
  }
  std::optional<RankedDag> dag = rank_nodes(nodes);
  if (!dag) {
    return std::nullopt;
  }
  Search search{*dag, Painter(*dag), std::vector<std::size_t>(dag->size(), 0)};
  for (Rank r = 0; r < dag->size(); ++r) {
    if (search.visit(r)) {
      break;
    }
  }
  return Midpoint{dag->original[search.best_rank], search.best_weight, dag->size()};
}

std::vector<DagNode> make_dag(const std::vector<std::string>& ids,
                              const std::vector<std::vector<std::string>>& parent_ids) {
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    index.emplace(ids[i], i);
  }
  std::vector<DagNode> nodes(ids.size());
  for (std::size_t i = 0; i < ids.size() && i < parent_ids.size(); ++i) {
    for (const auto& parent : parent_ids[i]) {
      if (auto it = index.find(parent); it != index.end()) {
        nodes[i].parents.push_back(it->second);
      }
    }
  }
  return nodes;
}

} // namespace bisectd::bisect
