#pragma once
// Internal to vcs/: a reader for git's commit-graph file (objects/info/commit-graph, format v1) and the
// writer call that keeps it current. With it, history walks read parents, commit times and generation
// numbers from one mapped file instead of inflating every commit object (git does the same).
// libgit2 1.5 writes the file but does not use it in its revwalk, hence our own reader.

#include "base/error.hpp"

#include <git2.h>
#include <git2/sys/commit_graph.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace bisectd::vcs::detail {

class CommitGraph {
public:
  // The graph of `objects_dir`, or nullopt when there is none (or it is split, or not a format we read).
  static std::optional<CommitGraph> load(const std::filesystem::path& objects_dir);

  [[nodiscard]] std::uint32_t size() const { return m_count; }
  [[nodiscard]] std::optional<std::uint32_t> find(const git_oid& id) const;
  [[nodiscard]] git_oid oid(std::uint32_t pos) const;
  // Generation number (topological level, ≥ 1; 0 when the writer did not compute it).
  [[nodiscard]] std::uint32_t generation(std::uint32_t pos) const;
  [[nodiscard]] std::int64_t commit_time(std::uint32_t pos) const;
  // Appends the positions of `pos`'s parents to `out` (cleared first); false when the file is inconsistent.
  bool parents(std::uint32_t pos, std::vector<std::uint32_t>& out) const;

private:
  struct Mapping;
  // Finds the chunks of the file at `data`; false when it is not a graph we can read.
  bool parse_chunks(const unsigned char* data, std::size_t size);

  std::shared_ptr<const Mapping> m_file;
  const unsigned char* m_fanout = nullptr;
  const unsigned char* m_oids = nullptr;
  const unsigned char* m_data = nullptr;
  const unsigned char* m_edges = nullptr;
  std::size_t m_edge_count = 0;
  std::uint32_t m_count = 0;
};

// Rewrites objects/info/commit-graph for every commit reachable from any ref of `repo`.
Status write_commit_graph(git_repository* repo);

// `git rev-list bad ^goods...` over the graph, children before parents (generation order); nullopt when a
// tip is not in the graph or the graph lacks generation numbers (the caller then walks objects).
std::optional<std::vector<std::uint32_t>> graph_range(const CommitGraph& graph, const git_oid& bad,
                                                      const std::vector<git_oid>& goods);

} // namespace bisectd::vcs::detail
