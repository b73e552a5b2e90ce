#include "dag_repo.hpp"

#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"

#include <map>
#include <string_view>
#include <system_error>

namespace bisectd::bench {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_meta_file = "bisectd-bench-meta.txt";

struct Lcg {
  std::uint64_t state;
  std::size_t next(std::size_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state >> 33) % bound);
  }
};

// Builds the fast-import stream. Marks are commit numbers from 1; every commit edits one of 512 files.
struct Generator {
  Lcg rng{1};
  std::string script;
  std::size_t next_mark = 1;
  std::vector<std::size_t> mainline;
  std::vector<std::size_t> topic_tips;
  std::size_t merges = 0;

  std::size_t emit(std::string_view ref, const std::vector<std::size_t>& parents, std::string_view subject) {
    std::size_t mark = next_mark++;
    std::string when = std::to_string(1600000000 + mark * 37) + " +0000\n";
    std::string message =
      std::string(subject) + " " + std::to_string(mark) + "\n\nSigned-off-by: Dev <dev@example.org>\n";
    std::string content = "int v" + std::to_string(mark) + ";\n";
    script += "commit " + std::string(ref) + "\nmark :" + std::to_string(mark) + "\n";
    script += "author Dev <dev@example.org> " + when + "committer Dev <dev@example.org> " + when;
    script += "data " + std::to_string(message.size()) + "\n" + message;
    for (std::size_t i = 0; i < parents.size(); ++i) {
      script += (i == 0 ? "from :" : "merge :") + std::to_string(parents[i]) + "\n";
    }
    script += "M 100644 inline src/f" + std::to_string(mark % 512) + ".c\ndata " + std::to_string(content.size()) +
              "\n" + content + "\n";
    merges += parents.size() > 1 ? 1 : 0;
    return mark;
  }

  // A mainline commit some way back: mostly recent, sometimes thousands of commits old (long-lived trees).
  std::size_t fork_point() {
    std::size_t r = rng.next(100);
    std::size_t back = r < 70 ? rng.next(20) : (r < 95 ? rng.next(500) : rng.next(5000));
    back = std::min(back, mainline.size() - 1);
    return mainline[mainline.size() - 1 - back];
  }

  std::size_t topic(std::size_t base, std::size_t length) {
    std::size_t tip = base;
    for (std::size_t i = 0; i < length; ++i) {
      tip = emit("refs/heads/topic", {tip}, "topic work");
    }
    return tip;
  }

  void step() {
    if (mainline.empty() || rng.next(100) < 35) {
      mainline.push_back(emit("refs/heads/master",
                              mainline.empty() ? std::vector<std::size_t>{} : std::vector<std::size_t>{mainline.back()},
                              "mainline work"));
      return;
    }
    std::size_t base = fork_point();
    std::size_t tip = topic(base, 1 + rng.next(5));
    if (rng.next(100) < 15) { // a sub-maintainer tree merged into the topic first
      std::size_t sub = topic(base, 1 + rng.next(3));
      tip = emit("refs/heads/topic", {tip, sub}, "Merge sub-topic");
    }
    topic_tips.push_back(tip);
    mainline.push_back(emit("refs/heads/master", {mainline.back(), tip}, "Merge topic"));
  }
};

// ":mark sha" lines of fast-import's --export-marks file.
Result<std::map<std::size_t, std::string>> read_marks(const fs::path& file) {
  BISECTD_TRY_ASSIGN(auto text, base::read_file(file));
  std::map<std::size_t, std::string> marks;
  for (const auto& line : base::split_lines(text)) {
    auto parts = base::split(line, ' ');
    if (parts.size() == 2 && !parts[0].empty() && parts[0][0] == ':') {
      marks[std::stoul(parts[0].substr(1))] = parts[1];
    }
  }
  return marks;
}

Status generate(const DagShape& shape, const fs::path& git_dir) {
  Generator gen;
  gen.rng = Lcg{shape.seed};
  while (gen.next_mark <= shape.commits) {
    gen.step();
  }
  BISECTD_TRY(base::make_dirs(git_dir));
  base::Command init;
  init.argv = {"git", "init", "-q", "--bare", git_dir.string()};
  BISECTD_TRY(base::run_checked(init));
  fs::path marks_file = git_dir / "bench-marks.txt";
  base::Command import;
  import.argv = {"git", "fast-import", "--quiet", "--export-marks=" + marks_file.string()};
  import.cwd = git_dir;
  import.stdin_data = std::move(gen.script);
  BISECTD_TRY(base::run_checked(import));
  BISECTD_TRY_ASSIGN(auto marks, read_marks(marks_file));
  std::string meta = "commits " + std::to_string(gen.next_mark - 1) + "\nmerges " + std::to_string(gen.merges) + "\n";
  for (std::size_t mark : gen.mainline) {
    meta += "main " + marks[mark] + "\n";
  }
  for (std::size_t mark : gen.topic_tips) {
    meta += "topic " + marks[mark] + "\n";
  }
  return base::write_file_atomic(git_dir / k_meta_file, meta);
}

Result<DagRepo> load(const fs::path& git_dir) {
  BISECTD_TRY_ASSIGN(auto text, base::read_file(git_dir / k_meta_file));
  DagRepo repo;
  repo.git_dir = git_dir;
  for (const auto& line : base::split_lines(text)) {
    auto parts = base::split(line, ' ');
    if (parts.size() != 2) {
      continue;
    }
    if (parts[0] == "commits") {
      repo.commits = std::stoul(parts[1]);
    } else if (parts[0] == "merges") {
      repo.merges = std::stoul(parts[1]);
    } else if (parts[0] == "main") {
      repo.mainline.push_back(parts[1]);
    } else if (parts[0] == "topic") {
      repo.topic_tips.push_back(parts[1]);
    }
  }
  return repo;
}

} // namespace

Result<DagRepo> ensure_dag_repo(const DagShape& shape, const fs::path& cache_dir) {
  fs::path git_dir =
    cache_dir / ("dag-v1-n" + std::to_string(shape.commits) + "-s" + std::to_string(shape.seed) + ".git");
  std::error_code ec;
  if (!fs::exists(git_dir / k_meta_file, ec)) {
    fs::remove_all(git_dir, ec); // an interrupted generation
    BISECTD_TRY(generate(shape, git_dir));
  }
  return load(git_dir);
}

} // namespace bisectd::bench
