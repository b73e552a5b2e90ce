// detect-sim: scores bisect::detect_change_points and three baselines on synthetic benchmark-like series.
// Usage: detect-sim [--quick] [--json] [--check] [--seed N] [--series N] [--k K] [--p P] [--min-segment M]
//        [--window W] [--show-misses] [--commit-jitter S]

#include "baselines.hpp"
#include "evaluate.hpp"
#include "generator.hpp"

#include "bisect/detect.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bench = bisectd::bench;
namespace bisect = bisectd::bisect;

namespace {

struct Args {
  bool quick = false, json = false, check = false, show_misses = false;
  std::uint64_t seed = 20261129;
  int series = 0;  // per noise kind; 0 = 200 (quick) or 1000
  bisect::DetectOptions detect;
  bench::GeneratorOptions generator;
};

int usage() {
  std::fprintf(stderr, "usage: detect-sim [--quick] [--json] [--check] [--seed N] [--series N] [--k K] [--p P] "
                       "[--min-segment M] [--window W] [--show-misses] [--commit-jitter S]\n");
  return 2;
}

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--quick") {
      args.quick = true;
    } else if (a == "--json") {
      args.json = true;
    } else if (a == "--check") {
      args.check = true;
    } else if (a == "--seed" && has_value) {
      args.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--series" && has_value) {
      args.series = std::atoi(argv[++i]);
    } else if (a == "--k" && has_value) {
      args.detect.k_sigma = std::atof(argv[++i]);
    } else if (a == "--p" && has_value) {
      args.detect.max_p_value = std::atof(argv[++i]);
    } else if (a == "--commit-jitter" && has_value) {
      args.generator.commit_jitter = std::atof(argv[++i]);
    } else if (a == "--show-misses") {
      args.show_misses = true;
    } else if (a == "--window" && has_value) {
      args.detect.max_window = std::atoi(argv[++i]);
    } else if (a == "--min-segment" && has_value) {
      args.detect.min_segment = std::atoi(argv[++i]);
    } else {
      return false;
    }
  }
  if (args.series <= 0) {
    args.series = args.quick ? 200 : 1000;
  }
  return true;
}

using Method = std::function<std::vector<std::size_t>(const std::vector<bisect::SeriesPoint>&)>;

struct Calibration {
  // Confidence buckets [0,.8) [.8,.9) [.9,.99) [.99,1]: detections and how many were true.
  std::array<std::size_t, 4> total{}, correct{}, near{};  // correct: within ±5 of a step; near: within ±20
  // Detections within ±20 of a step: how often the step lies in [range_begin, range_end], total width.
  std::size_t ranged = 0, covered = 0, width = 0;
};

struct Results {
  std::vector<std::string> methods;
  std::map<std::string, std::map<std::string, bench::Score>> scores;  // noise -> method -> score
  std::map<std::string, Calibration> calibration;                     // noise -> ours
  double detector_seconds = 0;
  std::size_t detector_commits = 0;
};

std::size_t confidence_bucket(double c) { return c < 0.8 ? 0 : c < 0.9 ? 1 : c < 0.99 ? 2 : 3; }

void record_calibration(Calibration& cal, const bench::SimSeries& s, const std::vector<bisect::ChangePoint>& cps) {
  for (const bisect::ChangePoint& cp : cps) {
    long distance = 1000000;
    std::size_t nearest = 0;
    for (const bench::TrueStep& step : s.steps) {
      const long d = std::labs(static_cast<long>(step.index) - static_cast<long>(cp.index));
      nearest = d < distance ? step.index : nearest;
      distance = std::min(distance, d);
    }
    if (distance <= 20) {
      ++cal.ranged;
      cal.covered += cp.range_begin <= nearest && nearest <= cp.range_end ? 1 : 0;
      cal.width += cp.range_end - cp.range_begin + 1;
    }
    const std::size_t b = confidence_bucket(cp.confidence);
    ++cal.total[b];
    cal.correct[b] += distance <= bench::k_match_margin ? 1 : 0;
    cal.near[b] += distance <= 20 ? 1 : 0;
  }
}

// Debug aid: prints every step >= 3 sigma_hat the detector missed, with the series' steps and detections.
void show_misses(const std::string& noise, int index, const bench::SimSeries& s,
                 const std::vector<bisect::ChangePoint>& cps) {
  const double sigma = bench::relative_sigma_hat(s);
  for (const bench::TrueStep& step : s.steps) {
    bool found = false;
    for (const bisect::ChangePoint& cp : cps) {
      found = found || std::labs(static_cast<long>(step.index) - static_cast<long>(cp.index)) <= bench::k_match_margin;
    }
    if (found || std::abs(step.relative) < 3.0 * sigma) {
      continue;
    }
    std::fprintf(stderr, "miss: %s series %d (n=%zu, sigma_hat %.4f): step %zu %+.4f; steps:", noise.c_str(), index,
                 s.points.size(), sigma, step.index, step.relative);
    for (const bench::TrueStep& t : s.steps) {
      std::fprintf(stderr, " %zu:%+.3f", t.index, t.relative);
    }
    std::fprintf(stderr, "; detected:");
    for (const bisect::ChangePoint& cp : cps) {
      std::fprintf(stderr, " %zu:%+.3f(p=%.1e)", cp.index, cp.relative_change, cp.p_value);
    }
    std::fprintf(stderr, "\n");
  }
}

Results run(const Args& args) {
  Results r;
  r.methods = {"detector", "fixed-3%", "fixed-6%", "fixed-10%", "lkp", "perfherder"};
  const auto fixed = [](double threshold) {
    return [threshold](const std::vector<bisect::SeriesPoint>& s) { return bench::fixed_threshold_rule(s, threshold); };
  };
  const std::vector<Method> baselines = {fixed(0.03), fixed(0.06), fixed(0.10), bench::lkp_rule,
                                         bench::perfherder_rule};
  const bench::GeneratorOptions& gen = args.generator;
  for (bench::NoiseKind kind : bench::k_noise_kinds) {
    const std::string noise(bench::to_string(kind));
    for (int i = 0; i < args.series; ++i) {
      const std::uint64_t seed = args.seed * 1000003ULL + static_cast<std::uint64_t>(kind) * 7919ULL * 1000003ULL +
                                 static_cast<std::uint64_t>(i);
      const bench::SimSeries s = bench::generate_series(kind, seed, gen);
      const auto start = std::chrono::steady_clock::now();
      const std::vector<bisect::ChangePoint> cps = bisect::detect_change_points(s.points, args.detect);
      r.detector_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      r.detector_commits += s.points.size();
      std::vector<std::size_t> ours;
      for (const bisect::ChangePoint& cp : cps) {
        ours.push_back(cp.index);
      }
      bench::add_to_score(r.scores[noise]["detector"], s, ours);
      if (args.show_misses) {
        show_misses(noise, i, s, cps);
      }
      record_calibration(r.calibration[noise], s, cps);
      for (std::size_t m = 0; m < baselines.size(); ++m) {
        bench::add_to_score(r.scores[noise][r.methods[m + 1]], s, baselines[m](s.points));
      }
    }
  }
  return r;
}

// The targets of issue 4, per noise kind; prints each failure to stderr.
bool check_targets(const Results& r) {
  bool ok = true;
  for (const auto& [noise, by_method] : r.scores) {
    const bench::Score& ours = by_method.at("detector");
    if (ours.false_alarms_per_1000() > 0.5) {
      std::fprintf(stderr, "check: %s: %.2f false alarms per 1000 commits > 0.5\n", noise.c_str(),
                   ours.false_alarms_per_1000());
      ok = false;
    }
    if (ours.big_recall() < 0.9) {
      std::fprintf(stderr, "check: %s: recall %.3f for steps >= 3 sigma_hat < 0.9\n", noise.c_str(), ours.big_recall());
      ok = false;
    }
    for (const auto& [method, score] : by_method) {
      if (method != "detector" && score.f1() >= ours.f1()) {
        std::fprintf(stderr, "check: %s: F1 %.3f of %s >= ours %.3f\n", noise.c_str(), score.f1(), method.c_str(),
                     ours.f1());
        ok = false;
      }
    }
  }
  return ok;
}

void print_table(const Args& args, const Results& r) {
  std::printf("detect-sim: seed %llu, %d series per noise kind, options k=%.2f p=%.0e min_segment=%d window=%d, "
              "commit jitter %.3f\n",
              static_cast<unsigned long long>(args.seed), args.series, args.detect.k_sigma, args.detect.max_p_value,
              args.detect.min_segment, args.detect.max_window, args.generator.commit_jitter);
  std::printf("| noise | method | precision | recall | F1 | FA/1000 | FA/1000 (no-step series) | FP within 20 of a step |"
              " recall >=3σ̂ (steps) | recall >=3σ_run (steps) | recall by |step|/σ̂ [0,1) [1,2) [2,3) [3,5) [5,∞) |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [noise, by_method] : r.scores) {
    for (const std::string& method : r.methods) {
      const bench::Score& s = by_method.at(method);
      std::printf("| %s | %s | %.3f | %.3f | %.3f | %.2f | %.2f | %zu/%zu | %.3f (%zu) | %.3f (%zu) |", noise.c_str(),
                  method.c_str(), s.precision(), s.recall(), s.f1(), s.false_alarms_per_1000(),
                  s.null_false_alarms_per_1000(), s.near_false_positives, s.false_positives, s.big_recall(),
                  s.big_steps, s.run_big_recall(), s.run_big_steps);
      for (std::size_t b = 0; b < s.bucket_steps.size(); ++b) {
        std::printf(" %.2f", s.bucket_steps[b] ? static_cast<double>(s.bucket_found[b]) / s.bucket_steps[b] : 0.0);
      }
      std::printf(" |\n");
    }
  }
  std::printf("\nconfidence calibration (detector): bucket -> detections within ±5 / within ±20 of a true step / all\n");
  const char* names[] = {"[0,0.8)", "[0.8,0.9)", "[0.9,0.99)", "[0.99,1]"};
  for (const auto& [noise, cal] : r.calibration) {
    std::printf("  %-9s", noise.c_str());
    for (std::size_t b = 0; b < 4; ++b) {
      std::printf("  %s %zu/%zu/%zu", names[b], cal.correct[b], cal.near[b], cal.total[b]);
    }
    std::printf("\n  %-9s  change range covers the step for %zu of %zu detections near a step, mean width %.1f",
                "", cal.covered, cal.ranged, cal.ranged ? static_cast<double>(cal.width) / cal.ranged : 0.0);
    std::printf("\n");
  }
  std::printf("\ndetector time: %.1f ms per 1000 commits\n", 1000.0 * r.detector_seconds / r.detector_commits * 1000.0);
}

std::string bucket_list(const bench::Score& s) {
  std::string out;
  for (std::size_t b = 0; b < s.bucket_steps.size(); ++b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s{\"from\": %g, \"steps\": %zu, \"found\": %zu}", b ? ", " : "",
                  bench::k_effect_edges[b], s.bucket_steps[b], s.bucket_found[b]);
    out += buf;
  }
  return out;
}

void print_json(const Args& args, const Results& r) {
  std::printf("{\"seed\": %llu, \"series_per_noise\": %d, \"options\": {\"k_sigma\": %g, \"max_p_value\": %g, "
              "\"min_segment\": %d, \"max_window\": %d}, \"rows\": [",
              static_cast<unsigned long long>(args.seed), args.series, args.detect.k_sigma, args.detect.max_p_value,
              args.detect.min_segment, args.detect.max_window);
  bool first = true;
  for (const auto& [noise, by_method] : r.scores) {
    for (const std::string& method : r.methods) {
      const bench::Score& s = by_method.at(method);
      std::printf("%s\n  {\"noise\": \"%s\", \"method\": \"%s\", \"series\": %zu, \"commits\": %zu, \"steps\": %zu, "
                  "\"detections\": %zu, \"precision\": %.4f, \"recall\": %.4f, \"f1\": %.4f, "
                  "\"false_alarms_per_1000\": %.3f, \"null_false_alarms_per_1000\": %.3f, "
                  "\"steps_ge_3sigma\": %zu, \"recall_ge_3sigma\": %.4f, \"steps_ge_3run_sigma\": %zu, "
                  "\"recall_ge_3run_sigma\": %.4f, \"recall_by_effect\": [%s]}",
                  first ? "" : ",", noise.c_str(), method.c_str(), s.series, s.commits, s.steps, s.detections,
                  s.precision(), s.recall(), s.f1(), s.false_alarms_per_1000(), s.null_false_alarms_per_1000(),
                  s.big_steps, s.big_recall(), s.run_big_steps, s.run_big_recall(), bucket_list(s).c_str());
      first = false;
    }
  }
  std::printf("\n], \"detector_ms_per_1000_commits\": %.2f}\n",
              1000.0 * r.detector_seconds / r.detector_commits * 1000.0);
}

} // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    return usage();
  }
  const Results results = run(args);
  if (args.json) {
    print_json(args, results);
  } else {
    print_table(args, results);
  }
  if (args.check && !check_targets(results)) {
    std::fprintf(stderr, "detect-sim: targets not met\n");
    return 1;
  }
  return 0;
}
