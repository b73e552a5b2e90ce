#include "vcs/commit_graph.hpp"

#include "vcs/git_handle.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <queue>

namespace bisectd::vcs::detail {

namespace {

constexpr std::size_t k_oid_size = 20;
constexpr std::size_t k_data_size = k_oid_size + 16; // tree, parent 1, parent 2, generation + time
constexpr std::uint32_t k_no_parent = 0x70000000;
constexpr std::uint32_t k_edge_flag = 0x80000000;

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

std::uint64_t be64(const unsigned char* p) { return (std::uint64_t{be32(p)} << 32) | be32(p + 4); }

} // namespace

// A read-only mmap of the whole file.
struct CommitGraph::Mapping {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
  ~Mapping() {
    if (data != nullptr) {
      ::munmap(const_cast<unsigned char*>(data), size);
    }
  }
};

std::optional<CommitGraph> CommitGraph::load(const std::filesystem::path& objects_dir) {
  int fd = ::open((objects_dir / "info" / "commit-graph").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  struct stat st {};
  auto mapping = std::make_shared<Mapping>();
  if (::fstat(fd, &st) == 0 && st.st_size > 8) {
    void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      mapping->data = static_cast<const unsigned char*>(p);
      mapping->size = static_cast<std::size_t>(st.st_size);
    }
  }
  ::close(fd);
  CommitGraph graph;
  if (mapping->data == nullptr || !graph.parse_chunks(mapping->data, mapping->size)) {
    return std::nullopt;
  }
  graph.m_file = std::move(mapping);
  return graph;
}

bool CommitGraph::parse_chunks(const unsigned char* d, std::size_t size) {
  // Header: "CGPH", version 1, hash version 1 (SHA-1), chunk count, base graph count 0 (no split chains).
  if (std::memcmp(d, "CGPH", 4) != 0 || d[4] != 1 || d[5] != 1 || d[7] != 0 ||
      8 + (std::size_t{d[6]} + 1) * 12 > size) {
    return false;
  }
  std::size_t edge_bytes = 0;
  for (unsigned i = 0; i < d[6]; ++i) {
    const unsigned char* entry = d + 8 + i * 12;
    std::uint64_t offset = be64(entry + 4);
    std::uint64_t next = be64(entry + 16);
    if (offset > size || next > size || next < offset) {
      return false;
    }
    if (std::memcmp(entry, "OIDF", 4) == 0 && next - offset >= 256 * 4) {
      m_fanout = d + offset;
    } else if (std::memcmp(entry, "OIDL", 4) == 0) {
      m_oids = d + offset;
    } else if (std::memcmp(entry, "CDAT", 4) == 0) {
      m_data = d + offset;
    } else if (std::memcmp(entry, "EDGE", 4) == 0) {
      m_edges = d + offset;
      edge_bytes = next - offset;
    }
  }
  if (m_fanout == nullptr || m_oids == nullptr || m_data == nullptr) {
    return false;
  }
  m_count = be32(m_fanout + 255 * 4);
  m_edge_count = edge_bytes / 4;
  std::size_t end_oids = static_cast<std::size_t>(m_oids - d) + std::size_t{m_count} * k_oid_size;
  std::size_t end_data = static_cast<std::size_t>(m_data - d) + std::size_t{m_count} * k_data_size;
  return end_oids <= size && end_data <= size;
}

std::optional<std::uint32_t> CommitGraph::find(const git_oid& id) const {
  std::uint32_t lo = id.id[0] == 0 ? 0 : be32(m_fanout + (id.id[0] - 1) * 4);
  std::uint32_t hi = be32(m_fanout + id.id[0] * 4);
  while (lo < hi) {
    std::uint32_t mid = lo + (hi - lo) / 2;
    int cmp = std::memcmp(m_oids + std::size_t{mid} * k_oid_size, id.id, k_oid_size);
    if (cmp == 0) {
      return mid;
    }
    if (cmp < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return std::nullopt;
}

git_oid CommitGraph::oid(std::uint32_t pos) const {
  git_oid id;
  git_oid_fromraw(&id, m_oids + std::size_t{pos} * k_oid_size);
  return id;
}

std::uint32_t CommitGraph::generation(std::uint32_t pos) const {
  return be32(m_data + std::size_t{pos} * k_data_size + k_oid_size + 8) >> 2;
}

std::int64_t CommitGraph::commit_time(std::uint32_t pos) const {
  const unsigned char* p = m_data + std::size_t{pos} * k_data_size + k_oid_size + 8;
  return static_cast<std::int64_t>((std::uint64_t{be32(p) & 3} << 32) | be32(p + 4));
}

bool CommitGraph::parents(std::uint32_t pos, std::vector<std::uint32_t>& out) const {
  out.clear();
  const unsigned char* p = m_data + std::size_t{pos} * k_data_size + k_oid_size;
  std::uint32_t first = be32(p);
  std::uint32_t second = be32(p + 4);
  if (first != k_no_parent) {
    out.push_back(first);
  }
  if (second == k_no_parent) {
    return first == k_no_parent || first < m_count;
  }
  if ((second & k_edge_flag) == 0) {
    out.push_back(second);
  } else {
    for (std::size_t e = second & ~k_edge_flag; e < m_edge_count; ++e) {
      std::uint32_t edge = be32(m_edges + e * 4);
      out.push_back(edge & ~k_edge_flag);
      if ((edge & k_edge_flag) != 0) {
        break;
      }
    }
  }
  for (std::uint32_t parent : out) {
    if (parent >= m_count) {
      return false;
    }
  }
  return true;
}

Status write_commit_graph(git_repository* repo) {
  std::filesystem::path info = std::filesystem::path(git_repository_path(repo)) / "objects" / "info";
  std::error_code ec;
  std::filesystem::create_directories(info, ec);
  git_commit_graph_writer* writer = nullptr;
  BISECTD_TRY(check(git_commit_graph_writer_new(&writer, info.c_str()), "commit-graph writer", ErrorCode::io));
  std::unique_ptr<git_commit_graph_writer, decltype(&git_commit_graph_writer_free)> owned(writer,
                                                                                          git_commit_graph_writer_free);
  git_revwalk* raw = nullptr;
  BISECTD_TRY(check(git_revwalk_new(&raw, repo), "commit-graph walk"));
  RevwalkPtr walk(raw);
  BISECTD_TRY(check(git_revwalk_push_glob(walk.get(), "refs/*"), "commit-graph walk"));
  BISECTD_TRY(check(git_commit_graph_writer_add_revwalk(writer, walk.get()), "commit-graph walk"));
  git_commit_graph_writer_options options;
  git_commit_graph_writer_options_init(&options, GIT_COMMIT_GRAPH_WRITER_OPTIONS_VERSION);
  return check(git_commit_graph_writer_commit(writer, &options), "write " + info.string() + "/commit-graph",
               ErrorCode::io);
}

std::optional<std::vector<std::uint32_t>> graph_range(const CommitGraph& graph, const git_oid& bad,
                                                      const std::vector<git_oid>& goods) {
  constexpr std::uint8_t k_seen = 1;
  constexpr std::uint8_t k_uninteresting = 2;
  std::vector<std::uint8_t> flags(graph.size(), 0);
  // Pops the highest generation first: every child of a commit is settled before the commit itself.
  using Entry = std::pair<std::uint64_t, std::uint32_t>;
  std::priority_queue<Entry> queue;
  std::size_t interesting = 0;
  auto push = [&](std::uint32_t pos, std::uint8_t mark) {
    flags[pos] |= static_cast<std::uint8_t>(k_seen | mark);
    interesting += (flags[pos] & k_uninteresting) == 0 ? 1 : 0;
    queue.emplace((std::uint64_t{graph.generation(pos)} << 34) | static_cast<std::uint64_t>(graph.commit_time(pos)),
                  pos);
  };
  auto bad_pos = graph.find(bad);
  if (!bad_pos) {
    return std::nullopt;
  }
  for (const auto& good : goods) {
    auto pos = graph.find(good);
    if (!pos) {
      return std::nullopt;
    }
    if ((flags[*pos] & k_seen) == 0) {
      push(*pos, k_uninteresting);
    }
  }
  if ((flags[*bad_pos] & k_seen) == 0) {
    push(*bad_pos, 0);
  }
  std::vector<std::uint32_t> out;
  std::vector<std::uint32_t> parents;
  while (interesting > 0) {
    auto [key, pos] = queue.top();
    queue.pop();
    bool uninteresting = (flags[pos] & k_uninteresting) != 0;
    if (key >> 34 == 0 || !graph.parents(pos, parents)) {
      return std::nullopt; // no generation numbers, or a broken file: walk the objects instead
    }
    if (!uninteresting) {
      --interesting;
      out.push_back(pos);
    }
    for (std::uint32_t parent : parents) {
      if ((flags[parent] & k_seen) == 0) {
        push(parent, uninteresting ? k_uninteresting : 0);
      } else if (uninteresting && (flags[parent] & k_uninteresting) == 0) {
        flags[parent] |= k_uninteresting; // queued as interesting, not popped yet (lower generation)
        --interesting;
      }
    }
  }
  return out;
}

} // namespace bisectd::vcs::detail
