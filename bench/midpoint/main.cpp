// midpoint-bench: how good and how fast is our bisection point compared with `git rev-list --bisect`?
// For sampled (good, bad) ranges of a generated DAG repository it measures, in the same run:
//   ours = Repository::open + Repository::range_graph + bisect::make_dag + bisect::find_midpoint (in-process)
//   full = the same with Repository::range (every commit's metadata read too), reported alongside
//   git  = `git rev-list --bisect bad ^good...`: git's own GIT_TRACE_PERFORMANCE total, and wall time
// and scores both choices by min(w, n - w), w counted independently by a plain graph walk.
//
// Usage: midpoint-bench [--commits N] [--seed S] [--repeat R] [--commit-graph yes|no] [--cache DIR]
// With --commit-graph no the repository's commit-graph file is removed, so both sides read commit objects.
#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "bisect/midpoint.hpp"
#include "dag_repo.hpp"
#include "vcs/repository.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace bisectd;
using Clock = std::chrono::steady_clock;

struct Options {
  bench::DagShape shape;
  int repeat = 3;
  bool commit_graph = true; // objects/info/commit-graph present (used by both git and us) or removed
  std::filesystem::path cache = base::default_cache_dir() / "midpoint-bench";
};

struct Range {
  std::string name;
  std::vector<std::string> goods;
  std::string bad;
};

struct Ours {
  std::vector<std::string> ids;
  std::vector<bisect::DagNode> nodes;
  std::size_t chosen = 0;
  double total_ms = 1e300;
  double midpoint_ms = 1e300;
  double cpu_ms = 1e300;
  double full_cpu_ms = 1e300; // Repository::range (with metadata) + make_dag + find_midpoint
};

struct Git {
  std::string chosen;
  double self_ms = 1e300;
  double wall_ms = 1e300;
  double cpu_ms = 1e300;
};

// CPU time (user + system) of this process or of its waited-for children, in ms: robust on a busy machine.
double cpu_ms(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::vector<Range> sample_ranges(const bench::DagRepo& dag) {
  const auto& m = dag.mainline;
  const auto& t = dag.topic_tips;
  std::size_t l = m.size();
  std::size_t n = t.size();
  return {
    {"all", {m[0]}, m[l - 1]},
    {"last-quarter", {m[l * 3 / 4]}, m[l - 1]},
    {"recent-100", {m[l - 101]}, m[l - 1]},
    {"middle-1000", {m[l / 2 - 1000]}, m[l / 2]},
    {"old-3000", {m[l / 10]}, m[l / 10 + 3000]},
    {"good-on-topic", {t[n / 2]}, m[l - 1]},
    {"two-goods", {m[l / 4], t[n * 3 / 4]}, m[l - 1]},
    {"bad-on-topic", {m[l / 3]}, t[n * 2 / 3]},
  };
}

// Reachable count of `start` within the candidate set, by a plain walk (independent of find_midpoint).
std::size_t weight_of(const std::vector<bisect::DagNode>& nodes, std::size_t start) {
  std::vector<char> seen(nodes.size(), 0);
  std::vector<std::size_t> stack{start};
  seen[start] = 1;
  std::size_t count = 0;
  while (!stack.empty()) {
    std::size_t node = stack.back();
    stack.pop_back();
    ++count;
    for (std::size_t p : nodes[node].parents) {
      if (seen[p] == 0) {
        seen[p] = 1;
        stack.push_back(p);
      }
    }
  }
  return count;
}

// CPU ms of the CommitInfo path: Repository::range, then the same DAG and midpoint.
Result<double> time_full_range(const bench::DagRepo& dag, const Range& range, int repeat) {
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    double cpu_start = cpu_ms(RUSAGE_SELF);
    BISECTD_TRY_ASSIGN(auto repo, vcs::Repository::open(dag.git_dir));
    BISECTD_TRY_ASSIGN(auto commits, repo.range(range.goods, range.bad));
    std::vector<std::string> ids;
    std::vector<std::vector<std::string>> parents;
    for (auto& c : commits) {
      ids.push_back(std::move(c.sha));
      parents.push_back(std::move(c.parents));
    }
    auto mid = bisect::find_midpoint(bisect::make_dag(ids, parents));
    best = std::min(best, cpu_ms(RUSAGE_SELF) - cpu_start);
    if (!mid) {
      return make_error(ErrorCode::generic, range.name + ": no midpoint");
    }
  }
  return best;
}

Result<Ours> run_ours(const bench::DagRepo& dag, const Range& range, int repeat) {
  Ours ours;
  for (int i = 0; i < repeat; ++i) {
    auto start = Clock::now();
    double cpu_start = cpu_ms(RUSAGE_SELF);
    BISECTD_TRY_ASSIGN(auto repo, vcs::Repository::open(dag.git_dir));
    BISECTD_TRY_ASSIGN(auto commits, repo.range_graph(range.goods, range.bad));
    std::vector<std::string> ids;
    std::vector<std::vector<std::string>> parents;
    ids.reserve(commits.size());
    parents.reserve(commits.size());
    for (auto& c : commits) {
      ids.push_back(std::move(c.sha));
      parents.push_back(std::move(c.parents));
    }
    auto midpoint_start = Clock::now();
    auto nodes = bisect::make_dag(ids, parents);
    auto mid = bisect::find_midpoint(nodes);
    ours.midpoint_ms = std::min(ours.midpoint_ms, ms_since(midpoint_start));
    ours.total_ms = std::min(ours.total_ms, ms_since(start));
    ours.cpu_ms = std::min(ours.cpu_ms, cpu_ms(RUSAGE_SELF) - cpu_start);
    if (!mid) {
      return make_error(ErrorCode::generic, range.name + ": no midpoint");
    }
    ours.ids = std::move(ids);
    ours.nodes = std::move(nodes);
    ours.chosen = mid->index;
  }
  BISECTD_TRY_ASSIGN(ours.full_cpu_ms, time_full_range(dag, range, repeat));
  return ours;
}

// git's self-reported total from GIT_TRACE_PERFORMANCE ("performance: 0.123 s: git command: ...").
double git_self_ms(const std::string& err) {
  double ms = -1;
  for (const auto& line : base::split_lines(err)) {
    auto at = line.find("performance: ");
    if (at != std::string::npos && line.find("git command:") != std::string::npos) {
      ms = std::strtod(line.c_str() + at + 13, nullptr) * 1000.0;
    }
  }
  return ms;
}

Result<Git> run_git(const bench::DagRepo& dag, const Range& range, int repeat) {
  base::Command command;
  command.argv = {"git", "--git-dir=" + dag.git_dir.string(), "rev-list", "--bisect", range.bad};
  for (const auto& good : range.goods) {
    command.argv.push_back("^" + good);
  }
  command.env = {{"GIT_TRACE_PERFORMANCE", "1"}};
  Git git;
  for (int i = 0; i < repeat; ++i) {
    auto start = Clock::now();
    double cpu_start = cpu_ms(RUSAGE_CHILDREN);
    BISECTD_TRY_ASSIGN(auto status, base::run_checked(command));
    git.wall_ms = std::min(git.wall_ms, ms_since(start));
    git.cpu_ms = std::min(git.cpu_ms, cpu_ms(RUSAGE_CHILDREN) - cpu_start);
    git.self_ms = std::min(git.self_ms, git_self_ms(status.err));
    git.chosen = std::string(base::trim(status.out));
  }
  return git;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    std::string value = argv[i + 1];
    if (flag == "--commits") {
      options.shape.commits = std::stoul(value);
    } else if (flag == "--seed") {
      options.shape.seed = std::stoull(value);
    } else if (flag == "--repeat") {
      options.repeat = std::max(1, std::stoi(value));
    } else if (flag == "--commit-graph") {
      options.commit_graph = value != "no";
    } else if (flag == "--cache") {
      options.cache = value;
    } else {
      std::fprintf(stderr, "midpoint-bench: error: unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

// Writes (once) or removes the repository's commit-graph file.
Status set_commit_graph(const bench::DagRepo& dag, bool wanted) {
  auto file = dag.git_dir / "objects" / "info" / "commit-graph";
  std::error_code ec;
  if (!wanted) {
    std::filesystem::remove(file, ec);
    return {};
  }
  if (std::filesystem::exists(file, ec)) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto repo, vcs::Repository::open(dag.git_dir));
  return repo.write_commit_graph();
}

struct Row {
  std::size_t our_quality = 0;
  std::size_t git_quality = 0;
  double wall_ratio = 0;
  double cpu_ratio = 0;
};

// Scores both choices with an independent walk and prints one table row.
Row report(const Range& range, const Ours& ours, const Git& git) {
  std::size_t n = ours.nodes.size();
  auto git_it = std::find(ours.ids.begin(), ours.ids.end(), git.chosen);
  std::size_t w_ours = weight_of(ours.nodes, ours.chosen);
  std::size_t w_git =
    git_it == ours.ids.end() ? 0 : weight_of(ours.nodes, static_cast<std::size_t>(git_it - ours.ids.begin()));
  Row row{std::min(w_ours, n - w_ours), std::min(w_git, n - w_git), ours.total_ms / git.self_ms,
          ours.cpu_ms / git.cpu_ms};
  std::printf("%-14s %6zu %7zu %7zu %8.1f %7.1f %8.1f %8.1f %8.1f %8.1f %6.2f %6.2f %9.1f%s\n", range.name.c_str(), n,
              row.our_quality, row.git_quality, ours.total_ms, ours.midpoint_ms, git.self_ms, git.wall_ms, ours.cpu_ms,
              git.cpu_ms, row.wall_ratio, row.cpu_ratio, ours.full_cpu_ms,
              row.our_quality >= row.git_quality ? "" : "  WORSE");
  return row;
}

} // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  auto made = Clock::now();
  auto dag = bench::ensure_dag_repo(options.shape, options.cache);
  if (!dag) {
    std::fprintf(stderr, "midpoint-bench: error: %s\n", dag.error().message.c_str());
    return 1;
  }
  if (auto status = set_commit_graph(*dag, options.commit_graph); !status) {
    std::fprintf(stderr, "midpoint-bench: error: %s\n", status.error().message.c_str());
    return 1;
  }
  std::printf("commit-graph: %s\n", options.commit_graph ? "yes" : "no");
  std::printf("repo %s: %zu commits, %zu merges, mainline %zu (ready in %.0f ms), best of %d runs\n",
              dag->git_dir.c_str(), dag->commits, dag->merges, dag->mainline.size(), ms_since(made), options.repeat);
  std::printf("%-14s %6s %7s %7s %8s %7s %8s %8s %8s %8s %6s %6s %9s\n", "range", "n", "our q", "git q", "our ms",
              "(midpt)", "git ms", "git wall", "our cpu", "git cpu", "wall x", "cpu x", "full cpu");
  bool all_ok = true;
  double worst_wall = 0;
  double worst_cpu = 0;
  for (const auto& range : sample_ranges(*dag)) {
    auto ours = run_ours(*dag, range, options.repeat);
    auto git = run_git(*dag, range, options.repeat);
    if (!ours || !git) {
      std::fprintf(stderr, "midpoint-bench: error: %s: %s\n", range.name.c_str(),
                   (!ours ? ours.error() : git.error()).message.c_str());
      return 1;
    }
    Row row = report(range, *ours, *git);
    all_ok = all_ok && row.our_quality >= row.git_quality;
    worst_wall = std::max(worst_wall, row.wall_ratio);
    worst_cpu = std::max(worst_cpu, row.cpu_ratio);
  }
  std::printf("quality: %s; worst ratio ours/git: wall %.2f, cpu %.2f\n"
              "(git ms = git's own GIT_TRACE_PERFORMANCE total; git wall adds spawning; cpu = user+sys;\n"
              " full cpu = with Repository::range, i.e. reading every commit's metadata)\n",
              all_ok ? "ours >= git on every range" : "ours WORSE than git on some range", worst_wall, worst_cpu);
  return all_ok ? 0 : 1;
}
