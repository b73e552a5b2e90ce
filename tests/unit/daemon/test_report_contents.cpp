// What the mail reporter gathers for a report from the store and the history (issue #30 item 6): the commits the
// bisection skipped with the reasons stored with their flags, the culprit's diffstat, and the reproduce lines
// (quoted for a shell) with the files they read attached.
#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/reporting/reporter.hpp"
#include "daemon/reporting/reproduce.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "support/temp_dir.hpp"

#include "daemon/core/requests.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::test;

namespace {

struct ReportWorld {
  TempDir tmp;
  MemoryStore store;
  FakeTrees trees{tmp.path()};
  FakeRepo& repo = trees.repo("demo");
  FakeLab lab{{{"m0", "local", "local", "", false, "", false, "", 1}}};
  daemon::reporting::MailReporter reporter{store, trees, lab, {"bisectd <bisectd@localhost>", "", "", 40}};
  std::vector<std::string> line = repo.line("c", 8);
  daemon::Job job = bench_job();
  storage::TreeRow tree;
  storage::BisectionRow b;

  ReportWorld() {
    tree.name = "demo";
    tree.url = "https://git.example.org/demo.git";
    b.id = 5;
    b.tree = "demo";
    b.branch = "master";
    b.job = "bench";
    b.metric = "ops";
    b.good = line.front();
    b.bad = line.back();
    b.culprit = line[6];
    b.created_at = 1'764'454'020;
  }

  daemon::reporting::Conclusion conclusion() const {
    daemon::reporting::Conclusion c;
    c.chain = line;
    c.culprit = 6;
    c.parent = 5;
    c.culprit_sha = line[6];
    c.p_culprit = 0.9999;
    return c;
  }

  std::string body() { return reporter.compose(b, job, tree, conclusion()).value().body; }
};

} // namespace

TEST_CASE("reporter: the skipped commits of the searched chain, with their stored reasons", "[daemon][report]") {
  ReportWorld w;
  auto flag = [&](const daemon::Job& job, int i, storage::CommitFlag f, const std::string& why, int times) {
    for (int n = 0; n < times; ++n) {
      REQUIRE(w.store.add_flag(daemon::flag_key(job, w.line[i]), f, why));
    }
  };
  auto other = w.job;
  other.name = "other";
  flag(w.job, 2, storage::CommitFlag::unbuildable, "src/main.c:3: error: boom", 2);
  flag(w.job, 3, storage::CommitFlag::unbootable, "panic", 1); // once: evidence, not skipped
  flag(w.job, 4, storage::CommitFlag::unrunnable, "no ops in the output", 2);
  flag(other, 5, storage::CommitFlag::unbuildable, "another job's", 2); // not ours
  std::string body = w.body();
  INFO(body);
  CHECK(body.find("skipped: 2 commits could not be measured, the bisection searched around them:\n  " +
                  base::short_sha(w.line[2]) + " (\"commit c2\")\n      unbuildable (2 times): src/main.c:3: error: boom\n  " +
                  base::short_sha(w.line[4]) + " (\"commit c4\")\n      unrunnable (2 times): no ops in the output\n") !=
        std::string::npos);
  CHECK(body.find(base::short_sha(w.line[3]) + " (\"commit c3\")") == std::string::npos);
  CHECK(body.find("P(culprit): > 99.9%") != std::string::npos);
}

TEST_CASE("reporter: the culprit's diffstat from the history", "[daemon][report]") {
  ReportWorld w;
  std::string body = w.body();
  CHECK(body.find("diffstat of " + base::short_sha(w.line[6]) + " (\"commit c6\"):\n\n src/main.c | 2 +-\n 1 file changed, 1 "
                  "insertion(+), 1 deletion(-)\n") != std::string::npos);
  CHECK(body.find("skipped:") == std::string::npos); // nothing skipped: no section
}

namespace {

// What `sh` makes of the words of `line` (each printed on a line of its own): the argv a reader's shell runs.
std::vector<std::string> shell_words(const std::string& line) {
  base::Command cmd;
  cmd.argv = {"/bin/sh", "-c", "printf '%s\\n' " + line};
  cmd.timeout = std::chrono::seconds(10);
  auto status = base::run(cmd);
  REQUIRE(status);
  REQUIRE(status->ok());
  return base::split_lines(status->out);
}

} // namespace

TEST_CASE("reporter: the reproduce lines of a command job, quoted for a shell, no credentials", "[daemon][report]") {
  ReportWorld w;
  w.tree.url = "https://robot:s3cret@git.example.org/demo.git";
  w.job.build.command = {"make", "CFLAGS=-O2 -g"};
  w.job.build.env = {{"CC", "ccache gcc"}};
  std::vector<std::string> run{"./bench", "--name", "it's $(echo pwned) `id` \"q\" ; rm", "a b", ""};
  w.job.run.command = run;
  w.job.run.env = {{"LC_ALL", "C"}};
  auto r = daemon::reporting::reproduction(w.job, w.tree.url, "demo", w.line[6], w.line[5]);
  REQUIRE(r.lines.size() == 5);
  CHECK(r.lines[0] == "git clone https://git.example.org/demo.git demo");
  CHECK(r.lines[1] == "cd demo");
  CHECK(r.lines[2] == "git checkout " + w.line[6] + "  # then the same from here on its parent " + w.line[5]);
  CHECK(r.lines[3] == "CC='ccache gcc' make 'CFLAGS=-O2 -g'");
  CHECK(r.lines[4].starts_with("LC_ALL=C ./bench --name 'it'\\''s $(echo pwned) `id` \"q\" ; rm' 'a b' ''"));
  CHECK(r.lines[4].ends_with("  # 3 runs: ops (higher is better)"));
  CHECK(r.files.empty());
  // The shell gives back the very argv the lab ran.
  auto words = r.lines[4].substr(std::string("LC_ALL=C ").size());
  words = words.substr(0, words.rfind("  # "));
  std::vector<std::string> expected = run;
  CHECK(shell_words(words) == expected);
  CHECK(shell_words(r.lines[3].substr(std::string("CC='ccache gcc' ").size())) ==
        std::vector<std::string>{"make", "CFLAGS=-O2 -g"});

  // In the mail: the lines, the job file attached, no token.
  w.job.yaml = "name: bench\nbuild: {recipe: command, command: [make]}\n";
  auto row = w.reporter.compose(w.b, w.job, w.tree, w.conclusion()).value();
  CHECK(row.body.find("To reproduce without bisectd (the job file bench.yaml is attached):\n\n"
                      "        git clone https://git.example.org/demo.git demo\n") != std::string::npos);
  CHECK(row.body.find("\nWith bisectd:\n\n        bisectctl tree add demo") != std::string::npos);
  CHECK(row.text.find("Content-Disposition: attachment; filename=\"bench.yaml\"") != std::string::npos);
  CHECK(row.text.find("s3cret") == std::string::npos);
}

TEST_CASE("reporter: the reproduce lines of a kernel job, its config files attached", "[daemon][report]") {
  ReportWorld w;
  auto config = w.tmp.path() / "x86_64-rhel-9.4";
  auto fragment = w.tmp.path() / "bench.config";
  REQUIRE(base::write_file_atomic(config, "CONFIG_64BIT=y\n"));
  REQUIRE(base::write_file_atomic(fragment, "# CONFIG_PREEMPT is not set\n"));
  w.job.build.kind = kbuild::RecipeKind::kernel;
  w.job.build.config = config.string();
  w.job.build.fragment = fragment;
  w.job.build.extra_options = {"CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y"};
  w.job.build.kcflags = "-falign-functions=64 -g";
  w.job.build.modules = true;
  w.job.run.command = {"/lkp/run", "vm-scalability"};
  auto r = daemon::reporting::reproduction(w.job, w.tree.url, "demo", w.line[6], w.line[5]);
  std::vector<std::string> expected{
    "git clone https://git.example.org/demo.git demo",
    "cd demo",
    "git checkout " + w.line[6] + "  # then the same from here on its parent " + w.line[5],
    "mkdir -p build",
    "cp ../x86_64-rhel-9.4 build/.config",
    "cat ../bench.config >> build/.config",
    "echo 'CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y' >> build/.config",
    "make O=build ARCH=x86_64 KCFLAGS='-falign-functions=64 -g' olddefconfig",
    "make O=build ARCH=x86_64 KCFLAGS='-falign-functions=64 -g' -j\"$(nproc)\" bzImage modules",
    "# boot build/arch/x86/boot/bzImage on the test machine, then run there:",
    "/lkp/run vm-scalability  # 3 runs: ops (higher is better)"};
  CHECK(r.lines == expected);
  CHECK(shell_words(r.lines[7]) ==
        std::vector<std::string>{"make", "O=build", "ARCH=x86_64", "KCFLAGS=-falign-functions=64 -g", "olddefconfig"});
  REQUIRE(r.files.size() == 2);
  CHECK(r.files[0].name == "x86_64-rhel-9.4");
  CHECK(r.files[0].text == "CONFIG_64BIT=y\n");
  CHECK(r.files[1].name == "bench.config");

  // A make target needs no file; a config that cannot be read is named, not attached.
  w.job.build.config = "tinyconfig";
  w.job.build.fragment = w.tmp.path() / "missing.config";
  r = daemon::reporting::reproduction(w.job, w.tree.url, "demo", w.line[6], w.line[5]);
  CHECK(r.lines[4] == "make O=build ARCH=x86_64 KCFLAGS='-falign-functions=64 -g' tinyconfig");
  CHECK(r.lines[5].starts_with("# missing.config (the job's, on bisectd's host) is not attached: "));
  CHECK(r.files.empty());
}
