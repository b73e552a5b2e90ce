// detect-sim: scores bisect::detect_change_points and baselines on synthetic benchmark-like series with lab
// effects (one kind per lab effect) and on the real-world labelled TCPD series (docs/detect-sim.md).
// Usage: detect-sim [--quick] [--check] [--seed N] [--series N] [--kinds a,b] [--k K] [--p P] [--min-segment M]
//        [--window W] [--commit-jitter S] [--all-baselines] [--no-delay] [--data DIR] [--tcpd-detail]

#include "baselines.hpp"
#include "bisect/detect.hpp"
#include "evaluate.hpp"
#include "generator.hpp"
#include "tcpd.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#ifndef DETECT_SIM_DATA_DIR
#define DETECT_SIM_DATA_DIR "data"
#endif

namespace bench = bisectd::bench;
namespace bisect = bisectd::bisect;

namespace {

// `--check` gates every kind and TCPD: <= 0.5 false alarms per 1000 commits, recall >= 0.9 for steps >= 3
// sigma_hat, F1 >= every baseline. Where the detector still misses a target (docs/detect-sim.md says why), the
// gate is a regression bound at the level measured instead, listed here.
struct KindBounds {
  double false_alarms = 0.5; // per 1000 commits
  double f1_slack = 0.0;     // F1 may trail the best baseline by this much
};
const std::map<std::string, KindBounds> k_missed_targets = {
  // Met on the full runs (F1 0.821 vs binseg 0.807, seed 4242: 0.848 vs PELT 0.832), a tie in --quick's 60 series
  // (0.789 vs binseg 0.789), where one step found or missed moves F1 by ~0.006: a slack of 0.02 there.
  {"single_value", {0.5, 0.02}},
};

struct Args {
  bool quick = false, check = false, all_baselines = false, delay = true, tcpd_detail = false;
  std::uint64_t seed = 20261129;
  int series = 0;              // per kind; 0 = 60 (quick) or 500
  std::set<std::string> kinds; // empty = all
  std::string data = DETECT_SIM_DATA_DIR;
  bisect::DetectOptions detect;
  bench::GeneratorOptions generator;
};

int usage() {
  std::fprintf(stderr, "usage: detect-sim [--quick] [--check] [--seed N] [--series N] [--kinds a,b] [--k K] "
                       "[--p P] [--min-segment M] [--window W] [--commit-jitter S] [--all-baselines] [--no-delay] "
                       "[--data DIR] [--tcpd-detail]\n");
  return 2;
}

std::set<std::string> split_kinds(std::string_view list) {
  std::set<std::string> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    out.emplace(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

bool parse_value(std::string_view a, const char* value, Args& args) {
  if (a == "--seed") {
    args.seed = std::strtoull(value, nullptr, 10);
  } else if (a == "--series") {
    args.series = std::atoi(value);
  } else if (a == "--kinds") {
    args.kinds = split_kinds(value);
  } else if (a == "--k") {
    args.detect.k_sigma = std::atof(value);
  } else if (a == "--p") {
    args.detect.max_p_value = std::atof(value);
  } else if (a == "--commit-jitter") {
    args.generator.commit_jitter = std::atof(value);
  } else if (a == "--window") {
    args.detect.max_window = std::atoi(value);
  } else if (a == "--min-segment") {
    args.detect.min_segment = std::atoi(value);
  } else if (a == "--data") {
    args.data = value;
  } else {
    return false;
  }
  return true;
}

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick") {
      args.quick = true;
    } else if (a == "--check") {
      args.check = true;
    } else if (a == "--all-baselines") {
      args.all_baselines = true;
    } else if (a == "--no-delay") {
      args.delay = false;
    } else if (a == "--tcpd-detail") {
      args.tcpd_detail = true;
    } else if (i + 1 < argc && parse_value(a, argv[i + 1], args)) {
      ++i;
    } else {
      return false;
    }
  }
  if (args.series <= 0) {
    args.series = args.quick ? 60 : 500;
  }
  return true;
}

using Method = std::function<std::vector<std::size_t>(const std::vector<bisect::SeriesPoint>&)>;
struct NamedMethod {
  std::string name;
  Method run;
};

std::vector<std::size_t> indices(const std::vector<bisect::ChangePoint>& cps) {
  std::vector<std::size_t> out;
  for (const bisect::ChangePoint& cp : cps) {
    out.push_back(cp.index);
  }
  return out;
}

std::vector<NamedMethod> methods(const Args& args) {
  const bisect::DetectOptions ours = args.detect;
  bisect::DetectOptions plain = args.detect;
  plain.lab_model = false;
  std::vector<NamedMethod> out = {
    {"detector", [ours](const auto& s) { return indices(bisect::detect_change_points(s, ours)); }},
    {"detector-no-lab", [plain](const auto& s) { return indices(bisect::detect_change_points(s, plain)); }},
    {"binseg", bench::binseg_rule},
    {"pelt", bench::pelt_rule},
    {"perfherder", bench::perfherder_rule},
    {"zero", [](const auto&) { return std::vector<std::size_t>{}; }},
  };
  if (args.all_baselines) {
    for (double t : {0.03, 0.06, 0.10}) {
      out.push_back({"fixed-" + std::to_string(static_cast<int>(t * 100)) + "%",
                     [t](const auto& s) { return bench::fixed_threshold_rule(s, t); }});
    }
    out.push_back({"lkp", bench::lkp_rule});
  }
  return out;
}

struct Delays {
  std::vector<std::size_t> commits; // commits after the step before the first alert at the step
  std::size_t never = 0;            // found in the whole series, but not within 64 commits of the step
};

// Smallest d such that the detector, run on the series cut d commits after `step`, reports it (within ±5).
// Binary search: more commits after a step only ever add evidence for it.
std::size_t alert_delay(const bench::SimSeries& s, std::size_t step, const bisect::DetectOptions& options) {
  const auto found_with = [&](std::size_t d) {
    const std::vector<bisect::SeriesPoint> prefix(
      s.points.begin(), s.points.begin() + static_cast<long>(std::min(s.points.size(), step + d)));
    for (const bisect::ChangePoint& cp : bisect::detect_change_points(prefix, options)) {
      if (std::labs(static_cast<long>(cp.index) - static_cast<long>(step)) <= bench::k_match_margin) {
        return true;
      }
    }
    return false;
  };
  std::size_t lo = 1, hi = 64;
  if (!found_with(hi)) {
    return 0;
  }
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (found_with(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

struct Results {
  std::vector<std::string> methods, kinds;
  std::map<std::string, std::map<std::string, bench::Score>> scores; // kind -> method -> score
  std::map<std::string, Delays> delays;                              // kind -> ours
  std::map<std::string, std::map<std::string, double>> tcpd;         // series -> method -> F1
  double detector_seconds = 0;
  std::size_t detector_commits = 0;
};

void record_delays(Delays& d, const bench::SimSeries& s, const std::vector<std::size_t>& found,
                   const bisect::DetectOptions& options, std::size_t limit) {
  const double sigma = bench::relative_sigma_hat(s);
  for (const bench::TrueStep& step : s.steps) {
    const bool hit = std::any_of(found.begin(), found.end(), [&](std::size_t f) {
      return std::labs(static_cast<long>(f) - static_cast<long>(step.index)) <= bench::k_match_margin;
    });
    if (!hit || std::abs(step.relative) < 3.0 * sigma || d.commits.size() + d.never >= limit) {
      continue;
    }
    const std::size_t delay = alert_delay(s, step.index, options);
    if (delay == 0) {
      ++d.never;
    } else {
      d.commits.push_back(delay);
    }
  }
}

void run_kind(const Args& args, bench::NoiseKind kind, const std::vector<NamedMethod>& ms, Results& r) {
  const std::string name(bench::to_string(kind));
  r.kinds.push_back(name);
  const std::size_t delay_limit = args.quick ? 10 : 60;
  for (int i = 0; i < args.series; ++i) {
    const std::uint64_t seed =
      args.seed * 1000003ULL + static_cast<std::uint64_t>(kind) * 7919ULL * 1000003ULL + static_cast<std::uint64_t>(i);
    const bench::SimSeries s = bench::generate_series(kind, seed, args.generator);
    for (const NamedMethod& m : ms) {
      const auto start = std::chrono::steady_clock::now();
      const std::vector<std::size_t> found = m.run(s.points);
      if (m.name == "detector") {
        r.detector_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        r.detector_commits += s.points.size();
        if (args.delay) {
          record_delays(r.delays[name], s, found, args.detect, delay_limit);
        }
      }
      bench::add_to_score(r.scores[name][m.name], s, found);
    }
  }
}

bool run_tcpd(const Args& args, Results& r) {
  std::vector<bench::TcpdSeries> all;
  std::string error;
  if (!bench::load_tcpd(args.data + "/tcpd", all, error)) {
    std::fprintf(stderr, "detect-sim: %s\n", error.c_str());
    return false;
  }
  for (const bench::TcpdSeries& s : all) {
    for (const NamedMethod& m : methods(args)) {
      std::vector<std::size_t> found = m.run(s.points);
      if (m.name == "binseg" || m.name == "pelt") {
        // TCPDBench reports R's locations (last point before each change, 0-based): reproduce its scores.
        for (std::size_t& f : found) {
          f = f > 0 ? f - 1 : 0;
        }
      }
      r.tcpd[s.name][m.name] = bench::tcpd_f1(s.annotations, found);
    }
  }
  return true;
}

Results run(const Args& args) {
  Results r;
  const std::vector<NamedMethod> ms = methods(args);
  for (const NamedMethod& m : ms) {
    r.methods.push_back(m.name);
  }
  for (bench::NoiseKind kind : bench::k_noise_kinds) {
    if (args.kinds.empty() || args.kinds.count(std::string(bench::to_string(kind))) != 0) {
      run_kind(args, kind, ms, r);
    }
  }
  return r;
}

double tcpd_mean(const Results& r, const std::string& method) {
  double sum = 0;
  for (const auto& [series, by_method] : r.tcpd) {
    sum += by_method.at(method);
  }
  return r.tcpd.empty() ? 0.0 : sum / static_cast<double>(r.tcpd.size());
}

bool check_kind(const std::string& kind, const std::map<std::string, bench::Score>& by_method) {
  bool ok = true;
  const auto missed = k_missed_targets.find(kind);
  const KindBounds bounds = missed == k_missed_targets.end() ? KindBounds{} : missed->second;
  const bench::Score& ours = by_method.at("detector");
  if (ours.false_alarms_per_1000() > bounds.false_alarms) {
    std::fprintf(stderr, "check: %s: %.2f false alarms per 1000 commits > %.1f\n", kind.c_str(),
                 ours.false_alarms_per_1000(), bounds.false_alarms);
    ok = false;
  }
  if (ours.big_recall() < 0.9) {
    std::fprintf(stderr, "check: %s: recall %.3f for steps >= 3 sigma_hat < 0.9\n", kind.c_str(), ours.big_recall());
    ok = false;
  }
  for (const auto& [method, score] : by_method) {
    if (method != "detector" && method != "detector-no-lab" && score.f1() > ours.f1() + bounds.f1_slack) {
      std::fprintf(stderr, "check: %s: F1 %.3f of %s > ours %.3f (+ %.2f)\n", kind.c_str(), score.f1(), method.c_str(),
                   ours.f1(), bounds.f1_slack);
      ok = false;
    }
  }
  return ok;
}

// The detection targets on every kind run, and on TCPD when it was run; prints each failure to stderr.
bool check_targets(const Results& r, bool gate_tcpd) {
  bool ok = true;
  for (const auto& [kind, by_method] : r.scores) {
    ok = check_kind(kind, by_method) && ok;
  }
  if (gate_tcpd && !r.tcpd.empty()) {
    const double ours = tcpd_mean(r, "detector");
    for (const char* m : {"binseg", "pelt", "zero"}) {
      if (tcpd_mean(r, m) > ours) {
        std::fprintf(stderr, "check: tcpd: mean F1 %.3f of %s > ours %.3f\n", tcpd_mean(r, m), m, ours);
        ok = false;
      }
    }
  }
  return ok;
}

void print_scores(const Results& r) {
  std::printf("| kind | method | precision | recall | F1 | FA/1000 | FA/1000 (no-step series) | "
              "recall >=3σ̂ (steps) | recall by |step|/σ̂ [0,1) [1,2) [2,3) [3,5) [5,∞) |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& kind : r.kinds) {
    for (const std::string& method : r.methods) {
      const bench::Score& s = r.scores.at(kind).at(method);
      std::printf("| %s | %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.3f (%zu) |", kind.c_str(), method.c_str(),
                  s.precision(), s.recall(), s.f1(), s.false_alarms_per_1000(), s.null_false_alarms_per_1000(),
                  s.big_recall(), s.big_steps);
      for (std::size_t b = 0; b < s.bucket_steps.size(); ++b) {
        std::printf(" %.2f", s.bucket_steps[b] ? static_cast<double>(s.bucket_found[b]) / s.bucket_steps[b] : 0.0);
      }
      std::printf(" |\n");
    }
  }
}

void print_delays(const Results& r) {
  if (r.delays.empty()) {
    return;
  }
  std::printf("\ndetection delay of the detector (steps >= 3σ̂ it finds): commits after the step before it is "
              "reported, median / 90th percentile / max (steps measured; not within 64 commits)\n");
  for (const std::string& kind : r.kinds) {
    auto it = r.delays.find(kind);
    if (it == r.delays.end() || it->second.commits.empty()) {
      continue;
    }
    std::vector<std::size_t> d = it->second.commits;
    std::sort(d.begin(), d.end());
    std::printf("  %-14s %zu / %zu / %zu  (%zu; %zu)\n", kind.c_str(), d[d.size() / 2], d[(d.size() * 9) / 10],
                d.back(), d.size(), it->second.never);
  }
}

void print_tcpd(const Args& args, const Results& r) {
  if (r.tcpd.empty()) {
    return;
  }
  std::printf("\nTCPD (%zu univariate series, human-annotated, one value per point): mean F1, margin 5 "
              "(TCPDBench f_measure)\n| method | F1 |\n|---|---|\n",
              r.tcpd.size());
  for (const std::string& m : r.methods) {
    std::printf("| %s | %.3f |\n", m.c_str(), tcpd_mean(r, m));
  }
  if (!args.tcpd_detail) {
    return;
  }
  std::printf("\n| series |");
  for (const std::string& m : r.methods) {
    std::printf(" %s |", m.c_str());
  }
  std::printf("\n|---|");
  for (std::size_t i = 0; i < r.methods.size(); ++i) {
    std::printf("---|");
  }
  std::printf("\n");
  for (const auto& [series, by_method] : r.tcpd) {
    std::printf("| %s |", series.c_str());
    for (const std::string& m : r.methods) {
      std::printf(" %.3f |", by_method.at(m));
    }
    std::printf("\n");
  }
}

void print_table(const Args& args, const Results& r) {
  std::printf("detect-sim: seed %llu, %d series per kind, options k=%.2f p=%.0e min_segment=%d window=%d, "
              "commit jitter %.3f\n",
              static_cast<unsigned long long>(args.seed), args.series, args.detect.k_sigma, args.detect.max_p_value,
              args.detect.min_segment, args.detect.max_window, args.generator.commit_jitter);
  print_scores(r);
  print_delays(r);
  print_tcpd(args, r);
  if (r.detector_commits > 0) {
    std::printf("\ndetector time: %.1f ms per 1000 commits\n",
                1000.0 * r.detector_seconds / static_cast<double>(r.detector_commits) * 1000.0);
  }
}

} // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    return usage();
  }
  Results results = run(args);
  const bool with_tcpd = args.kinds.empty() || args.kinds.count("tcpd") != 0;
  if (with_tcpd && !run_tcpd(args, results)) {
    return 2;
  }
  print_table(args, results);
  if (args.check && !check_targets(results, with_tcpd)) {
    std::fprintf(stderr, "detect-sim: targets not met\n");
    return 1;
  }
  return 0;
}
