#include "fixtures.hpp"

#include "report/comparison.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace bisectd::report::testing {

namespace {

Commit make_commit(std::string sha, std::string subject, std::string author, std::string email) {
  Commit commit;
  commit.sha = std::move(sha);
  commit.subject = std::move(subject);
  commit.author = Person{author, email};
  commit.committer = Person{"Andrew Morton", "akpm@linux-foundation.org"};
  commit.trailers = {{"Signed-off-by", author + " <" + email + ">"},
                     {"Reviewed-by", "Michal Hocko <mhocko@suse.com>"},
                     {"Cc", "stable@vger.kernel.org # 6.1+"},
                     {"Signed-off-by", "Andrew Morton <akpm@linux-foundation.org>"}};
  commit.commit_time = 1'764'000'000;
  return commit;
}

// Three samples per tested commit; positions after `culprit_position` sit on the bad side.
std::vector<ChartPoint> chart_points(double good, double bad, std::size_t culprit_position) {
  static constexpr std::size_t k_tested[] = {0, 4, 8, 10, 11, 12, 13, 16, 24};
  static constexpr double k_noise[] = {-0.004, 0.001, 0.003};
  std::vector<ChartPoint> points;
  for (std::size_t position : k_tested) {
    bool bad_side = position >= culprit_position;
    for (std::size_t run = 0; run < 3; ++run) {
      double base = bad_side ? bad : good;
      double wiggle = k_noise[(run + position) % 3];
      points.push_back(ChartPoint{
        position, bad_side ? "f6eccb430010201d3c155b73035a1b2c3d4e5f60" : "4c86da8ea2d2f784aa0011223344556677889900",
        std::round(base * (1 + wiggle)), bad_side});
      if (position == culprit_position) {
        points.back().commit = "f6eccb430010201d3c155b73035a1b2c3d4e5f60";
      } else if (bad_side) {
        points.back().commit = "9999999999aaaaaaaaaabbbbbbbbbbcccccccccc";
      }
    }
  }
  return points;
}

// One metric of monitors_input(): its level on each side; NaN: not collected on that side.
struct MonitorRow {
  std::string name;
  double parent, culprit;
};

// Six runs a side around each level (spread 0.4%, not proportional to the level's sign), as compare_runs gets them.
std::pair<std::vector<RunMetrics>, std::vector<RunMetrics>> monitor_runs(const std::vector<MonitorRow>& rows) {
  static constexpr double k_spread[] = {-0.004, 0.002, 0.001, -0.001, 0.003, -0.001};
  std::vector<RunMetrics> parent(6), culprit(6);
  for (std::size_t run = 0; run < 6; ++run) {
    for (const auto& row : rows) {
      if (!std::isnan(row.parent)) {
        parent[run][row.name] = row.parent * (1 + k_spread[run]);
      }
      if (!std::isnan(row.culprit)) {
        culprit[run][row.name] = row.culprit * (1 + k_spread[(run + 3) % 6]);
      }
    }
  }
  return {parent, culprit};
}

} // namespace

ReportInput regression_input() {
  ReportInput input;
  input.bisection_id = 42;
  input.created_at = 1'764'454'020; // 2025-11-29 22:07:00 UTC
  input.tree = "linux-next";
  input.branch = "master";
  input.url = "https://git.kernel.org/pub/scm/linux/kernel/git/next/linux-next.git";
  input.job_name = "vm-scalability-anon-r-seq";
  input.testcase = "vm-scalability";
  input.machine_description =
    "88 threads 2 sockets Intel(R) Xeon(R) Gold 6238M CPU @ 2.10GHz (Cascade Lake) with 128G memory";
  input.params = {{"runtime", "300s"}, {"test", "anon-r-seq"}, {"cpufreq_governor", "performance"}};
  input.compiler = "gcc-12";
  input.kconfig = "x86_64-rhel-9.4";
  input.metric = "vm-scalability.throughput";
  input.direction = +1;
  input.parent = make_commit("4c86da8ea2d2f784aa0011223344556677889900",
                             "mm: workingset: move the stats flush into workingset_test_recent()", "Yosry Ahmed",
                             "yosryahmed@google.com");
  input.culprit = make_commit("f6eccb430010201d3c155b73035a1b2c3d4e5f60", "mm: memcg: restore subtree stats flushing",
                              "Yosry Ahmed", "yosryahmed@google.com");
  input.metrics = {
    {"vm-scalability.throughput", {616100, 617900, 616800}, {576900, 577800, 576300}},
    {"vm-scalability.time.system_time", {2310, 2305, 2315}, {2450, 2460, 2455}},
    {"vm-scalability.time.user_time", {101.2, 99.8, 100.5}, {100.9, 101.4, 99.9}}, // noise: filtered out
    {"mpstat.cpu.all.sys%", {82.5, 83.0, 82.8}, {91.3, 91.6, 91.45}},
    {"cpuidle.C3.time", {1000, 20000, 739584}, {2941000, 2942000, 2942946}},
  };
  input.diffstat = " include/linux/memcontrol.h |  8 ++++++++\n"
                   " mm/memcontrol.c            | 31 +++++++++++++++++++++++++------\n"
                   " 2 files changed, 33 insertions(+), 6 deletions(-)\n";
  input.skipped = {
    {make_commit("a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "mm: memcg: add per-memcg flush stats", "Yosry Ahmed",
                 "yosryahmed@google.com"),
     "unbuildable: mm/memcontrol.c:1234:5: error: 'flush_next_time' undeclared (first use in this function)"},
    {make_commit("b2c3d4e5f60718293a4b5c6d7e8f901234567890", "mm: workingset: ratelimit the flush", "Yosry Ahmed",
                 "yosryahmed@google.com"),
     "unbootable (2 times): no login prompt within 300s (console: lkp-csl-2sp3 boot 2)"}};
  input.p_culprit = 0.9962;
  input.runs = 57;
  input.builds = 9;
  input.boots = 9;
  input.runs_reused = 18;
  input.chart = chart_points(616938, 577000, 12);
  input.verification = {"confirm: 10 interleaved pairs, -6.4% \u00b1 0.3% (holds)",
                        "revert: on top of 1a2b3c4d5e, throughput back to 616512 (+6.8%)",
                        "layout: with CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y still -6.2% (not an artefact)"};
  input.job_yaml = "name: vm-scalability-anon-r-seq\n"
                   "build: {recipe: kernel, kconfig: x86_64-rhel-9.4}\n"
                   "run: {machine_group: csl-2sp, command: [./run-vm-scalability, anon-r-seq], runs: 3}\n"
                   "metrics: {parse: lkp, primary: vm-scalability.throughput, direction: higher_is_better}\n";
  input.reproduce_script = {
    "git clone https://git.kernel.org/pub/scm/linux/kernel/git/next/linux-next.git linux-next",
    "cd linux-next",
    "git checkout f6eccb430010201d3c155b73035a1b2c3d4e5f60  # then the same from here on its parent "
    "4c86da8ea2d2f784aa0011223344556677889900",
    "mkdir -p build",
    "cp ../x86_64-rhel-9.4 build/.config",
    "make O=build ARCH=x86_64 olddefconfig",
    "make O=build ARCH=x86_64 -j\"$(nproc)\" bzImage",
    "# boot build/arch/x86/boot/bzImage on the test machine, then run there:",
    "./run-vm-scalability anon-r-seq  # 3 runs: vm-scalability.throughput (higher is better)"};
  input.files = {{"x86_64-rhel-9.4", "CONFIG_64BIT=y\nCONFIG_X86_64=y\n# CONFIG_PREEMPT is not set\n"}};
  input.reproduce = {"bisectctl show 42", "bisectctl report 42",
                     "bisectctl bisect start --tree linux-next --job vm-scalability-anon-r-seq --good 4c86da8ea2 "
                     "--bad f6eccb4300"};
  input.from = "bisectd <bisectd@localhost>";
  input.reported_by = "bisectd <bisectd@localhost>";
  input.archive_url = "https://lore.kernel.org/r/";
  return input;
}

ReportInput improvement_input() {
  ReportInput input = regression_input();
  input.bisection_id = 43;
  input.metric = "kbuild.buildtime_per_iteration";
  input.direction = -1;
  input.testcase = "kbuild";
  input.params = {{"runtime", "300s"}, {"nr_task", "50%"}};
  input.metrics = {{"kbuild.buildtime_per_iteration", {61.8, 62.4, 62.1}, {55.1, 54.7, 55.0}}};
  input.chart = chart_points(62.1, 55.0, 12);
  for (auto& point : input.chart) {
    point.value = std::round(point.value * 10) / 10;
  }
  input.verification = {"confirm: 10 interleaved pairs, -11.3% \u00b1 0.8% (holds)"};
  return input;
}

ReportInput set_input() {
  ReportInput input = regression_input();
  input.bisection_id = 44;
  input.credible_set = {input.culprit,
                        make_commit("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "mm: memcg: prepare for flushing",
                                    "Yosry Ahmed", "yosryahmed@google.com"),
                        make_commit("1122334455667788990011223344556677889900", "mm: memcg: fix the build on !SMP",
                                    "Yosry Ahmed", "yosryahmed@google.com")};
  input.p_culprit = 0.991;
  return input;
}

ReportInput layout_input() {
  ReportInput input = regression_input();
  input.bisection_id = 45;
  input.layout_artefact = true;
  input.verification = {"confirm: 10 interleaved pairs, -6.4% \u00b1 0.3% (holds)",
                        "layout: with CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y: -0.2% \u00b1 0.4% (shift vanished)"};
  return input;
}

ReportInput not_confident_input() {
  ReportInput input = set_input();
  input.bisection_id = 46;
  input.confident = false;
  input.p_culprit = 0.62;
  input.credible_set.push_back(
    make_commit("abcdefabcdefabcdefabcdefabcdefabcdefabcd", "mm: vmscan: tidy up", "Jane Doe", "jane@example.org"));
  return input;
}

ReportInput shared_binary_input() {
  ReportInput input;
  input.bisection_id = 7;
  input.created_at = 1'764'633'600; // 2025-12-02 00:00:00 UTC
  input.tree = "demo";
  input.branch = "master";
  input.url = "/srv/git/demo.git";
  input.job_name = "demo-bench";
  input.testcase = "demo-bench";
  input.machine_description = "8 threads 1 socket AMD EPYC 7282 16-Core Processor with 31G memory";
  input.compiler = "gcc-12";
  input.metric = "bench.ops_per_sec";
  input.direction = +1;
  input.watch = {"bench.latency_us", "bench.rss_kb"};
  input.culprit =
    make_commit("c0ffee0000111122223333444455556666777788", "hash: probe linearly", "Jane Doe", "jane@example.org");
  input.parent =
    make_commit("d0c5000000aaaabbbbccccddddeeeeffff000066", "docs: note 6", "Jane Doe", "jane@example.org");
  input.same_binary_as =
    make_commit("1417000000999988887777666655554444333322", "initial benchmark", "Jane Doe", "jane@example.org");
  input.metrics = {
    {"bench.ops_per_sec", {1012, 1004, 998, 1009, 1001, 996}, {856, 862, 849, 858, 851, 861}},
    {"bench.latency_us", {98.8, 99.6, 100.2, 99.1, 99.9, 100.4}, {116.8, 116.0, 117.8, 116.5, 117.5, 116.1}},
    {"bench.rss_kb", {2048, 2048, 2052, 2048, 2050, 2048}, {2048, 2050, 2048, 2048, 2048, 2052}}, // watched: shown
    {"bench.user_s", {1.01, 0.99, 1.0, 1.02, 0.98, 1.0}, {1.0, 1.01, 0.99, 1.0, 1.02, 0.99}},     // not: hidden
  };
  input.p_culprit = 0.9987;
  input.runs = 42;
  input.builds = 5; // local: no boots
  for (std::size_t position : {0, 3, 5, 6, 7, 9}) {
    bool bad = position >= 6;
    for (double value : bad ? std::vector<double>{856, 862, 849} : std::vector<double>{1012, 1004, 998}) {
      input.chart.push_back(ChartPoint{position, bad ? input.culprit.sha : input.same_binary_as->sha, value, bad});
    }
  }
  input.verification = {
    "confirm: 5 interleaved culprit/parent pairs differ by -14.8% ± 1.3% (paired runs, drift cancelled; the "
    "shift holds)",
    "revert: the reverted head 5e7e11ab12 reads +17.4% vs the bad head (medians of 8 + 8 interleaved runs; 98% of "
    "the culprit's change recovered): performance comes back"};
  input.job_yaml = "name: demo-bench\n"
                   "build: {recipe: command, command: [make]}\n"
                   "run: {command: [./bench], runs: 3}\n"
                   "metrics: {primary: bench.ops_per_sec, watch: [bench.latency_us, bench.rss_kb]}\n";
  input.reproduce_script = {
    "git clone /srv/git/demo.git demo", "cd demo",
    "git checkout c0ffee0000111122223333444455556666777788  # then the same from here on its parent "
    "d0c5000000aaaabbbbccccddddeeeeffff000066",
    "make", "./bench  # 3 runs: bench.ops_per_sec (higher is better)"};
  input.reproduce = {"bisectctl show 7", "bisectctl report 7"};
  input.from = "bisectd <bisectd@localhost>";
  return input;
}

ReportInput monitors_input() {
  ReportInput input = regression_input();
  input.bisection_id = 47;
  input.monitors = {"proc-vmstat", "vmstat", "interrupts", "softirqs", "meminfo", "time", "perf-stat", "perf-profile"};
  const double absent = std::nan("");
  std::vector<MonitorRow> rows = {
    {"vm-scalability.throughput", 616938, 577000},
    {"vm-scalability.time.system_time", 2310, 2455},
    {"vm-scalability.workload", 1.2e9, 1.121e9},
    {"time.elapsed_time", 300.5, 301.0}, // +0.2%: within 1%
    {"time.voluntary_context_switches", 12000, 16500},
    {"time.involuntary_context_switches", 5000, 5150},
    {"vmstat.cpu.sy", 12, 15},
    {"vmstat.cpu.id", 80, 80.5}, // half a point: too small
    {"vmstat.system.cs", 162036, 175973},
    {"vmstat.system.in", 50000, 51000}, // +2%: a monitor needs 5%
    {"proc-vmstat.pgactivate", 1.2e6, 2.5884e6},
    {"proc-vmstat.pgfault", 5e6, 5.1e6},
    {"proc-vmstat.pgmajfault", 3, 12},               // below the counter floor
    {"proc-vmstat.thp_fault_alloc", absent, 4000},   // one side only: no row
    {"meminfo.Active", 2.0e6, 2.3e6},
    {"interrupts.CAL:Function_call_interrupts", 40000, 52000},
    {"interrupts.LOC:Local_timer_interrupts", 1e6, 1.01e6},
    {"cpuidle.C1.usage", 1000, 5000},
    {"perf-stat.i.iTLB-load-misses", 1.0e6, 1.574e6},
    {"perf-stat.i.ipc", 1.2, 1.1},
    {"perf-stat.i.cycles", 2.0e11, 2.02e11}, // +1%: within 5%
    {"perf-profile.calltrace.cycles-pp.arch_tlbbatch_flush.try_to_unmap_flush.shrink_folio_list", absent, 2.4},
    {"perf-profile.calltrace.cycles-pp.do_anonymous_page.__handle_mm_fault.handle_mm_fault", 30.2, 26.1},
    {"perf-profile.children.cycles-pp.native_flush_tlb_one_user", 5.1, 8.9},
    {"perf-profile.self.cycles-pp.native_flush_tlb_one_user", 4.0, 7.2},
    {"perf-profile.self.cycles-pp.memcpy_orig", 0.3, 0.5}, // below 1% of samples
    // Hostile symbol names: a header injection, a name longer than any line should be, invalid UTF-8.
    {"perf-profile.self.cycles-pp.evil\r\nBcc: victim@example.org", absent, 3.0},
    {"perf-profile.calltrace.cycles-pp." + std::string(260, 'x') + ".leaf_function", 10, 14},
    {"perf-profile.self.cycles-pp.\xff\xfe_sym\xc3", 1.5, 3.5},
  };
  // More significant proc-vmstat rows than the cap leaves room for.
  for (const char* name : {"nr_active_anon", "nr_inactive_anon", "nr_active_file", "nr_inactive_file", "nr_mapped",
                           "nr_shmem", "nr_slab_reclaimable", "nr_slab_unreclaimable", "nr_zone_active_anon",
                           "nr_zone_inactive_anon", "numa_hit", "numa_local", "pgalloc_normal", "pgfree",
                           "pgdeactivate", "pgrefill", "pgrotated", "workingset_refault_anon"}) {
    double change = 1.1 + 0.07 * static_cast<double>(rows.size() % 18);
    rows.push_back({std::string("proc-vmstat.") + name, 250000, 250000 * change});
  }
  auto [parent, culprit] = monitor_runs(rows);
  input.metrics = compare_runs(parent, culprit);
  return input;
}

} // namespace bisectd::report::testing
