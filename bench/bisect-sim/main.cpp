// bisect-sim: simulated bisections with common random numbers; compares BCB with classic baselines and the
// information-theoretic bound. See docs/bisect-sim.md for the scenarios, what each method is given, and results.
//   bisect-sim [--quick] [--json] [--check] [--trials N] [--scenario SUBSTRING] [--methods a,b] [--seed S]
//              [--alert-runs N]
#include "sim_report.hpp"
#include "sim_runner.hpp"
#include "sim_world.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace bisectd::sim;

namespace {

constexpr const char* k_target_scenario = "n1000_d2.17_gauss_k1";

struct Options {
  bool quick = false, json = false, check = false;
  int trials = 0;
  int alert_runs = -1; // the alert's confirmation runs per endpoint; -1: as the daemon sizes them
  std::string scenario, methods;
  std::uint64_t seed = 20261129;
};

std::vector<MethodKind> all_methods() {
  return {MethodKind::bcb,    MethodKind::bcb_min_runs, MethodKind::bcb_no_prebuild,
          MethodKind::fixed3, MethodKind::fixed5,       MethodKind::fixed10,
          MethodKind::lkp,    MethodKind::pinpoint};
}

Scenario make(std::string name, std::size_t n, double d, Noise noise, int trials) {
  Scenario s;
  s.name = std::move(name);
  s.n = n;
  s.d = d;
  s.noise = noise;
  s.trials = trials;
  return s;
}

// The full grid with `t` trials per cell; the quick grid keeps the target row large.
std::vector<Scenario> scenarios(bool quick) {
  std::vector<Scenario> out;
  int t = quick ? 40 : 200;
  out.push_back(make(k_target_scenario, 1000, 2.17, Noise::gaussian, quick ? 300 : 1000));
  if (quick) {
    out.push_back(make("n1000_d2.17_outliers_k1", 1000, 2.17, Noise::outliers, t));
    out.push_back(make("n1000_d2.17_drift_k1", 1000, 2.17, Noise::drift, t));
    auto k4 = make("n1000_d2.17_gauss_k4", 1000, 2.17, Noise::gaussian, t);
    k4.k_machines = 4;
    out.push_back(k4);
    auto none = make("n1000_nochange_gauss_k1", 1000, 2.17, Noise::gaussian, t);
    none.no_change = true;
    out.push_back(none);
    return out;
  }
  for (std::size_t n : {16, 100, 100000}) {
    out.push_back(make("n" + std::to_string(n) + "_d2.17_gauss_k1", n, 2.17, Noise::gaussian, n > 1000 ? 100 : t));
  }
  for (double d : {1.0, 1.5, 3.0, 5.0}) {
    char name[64];
    std::snprintf(name, sizeof name, "n1000_d%g_gauss_k1", d);
    out.push_back(make(name, 1000, d, Noise::gaussian, t));
  }
  for (Noise noise : {Noise::student_t3, Noise::outliers, Noise::bimodal, Noise::boot_offsets, Noise::drift}) {
    out.push_back(make(std::string("n1000_d2.17_") + to_string(noise) + "_k1", 1000, 2.17, noise, t));
  }
  auto skip = make("n1000_d2.17_gauss_unbuildable10_k1", 1000, 2.17, Noise::gaussian, t);
  skip.unbuildable = 0.10;
  out.push_back(skip);
  auto merges = make("n1000_d2.17_gauss_merges10_k1", 1000, 2.17, Noise::gaussian, t);
  merges.merges = 10;
  out.push_back(merges);
  auto irrelevant = make("n1000_d2.17_gauss_irrelevant60_k1", 1000, 2.17, Noise::gaussian, t);
  irrelevant.irrelevant = 0.6;
  out.push_back(irrelevant);
  auto k4 = make("n1000_d2.17_gauss_k4", 1000, 2.17, Noise::gaussian, t);
  k4.k_machines = 4;
  out.push_back(k4);
  auto none = make("n1000_nochange_gauss_k1", 1000, 2.17, Noise::gaussian, t);
  none.no_change = true;
  out.push_back(none);
  return out;
}

std::vector<MethodKind> methods_for(const Scenario& sc, const Options& opt) {
  std::vector<MethodKind> out;
  for (MethodKind m : all_methods()) {
    bool wanted =
      opt.methods.empty() || ("," + opt.methods + ",").find("," + std::string(to_string(m)) + ",") != std::string::npos;
    // Pinpoint has no merge recursion here, so its merge row would only measure that. The quick mode runs the
    // run-minimizing and build-charging BCB variants on the target row only (it is the slowest to simulate).
    bool skip = (m == MethodKind::pinpoint && sc.merges > 0) ||
                (opt.quick && (m == MethodKind::bcb_min_runs || m == MethodKind::bcb_no_prebuild) &&
                 sc.name != k_target_scenario);
    if (wanted && !skip) {
      out.push_back(m);
    }
  }
  if (!opt.quick && sc.name == k_target_scenario && opt.methods.empty()) {
    out.push_back(MethodKind::bcb_verified);
  }
  return out;
}

int trials_for(const Scenario& sc, MethodKind m, const Options& opt) {
  if (opt.trials > 0) {
    return opt.trials;
  }
  // Baselines cost more runs per trial; in quick mode they get fewer trials than the BCB target row.
  if (opt.quick && m != MethodKind::bcb) {
    return std::min(sc.trials, 40);
  }
  if (m == MethodKind::bcb_verified || (m != MethodKind::bcb && sc.name == k_target_scenario)) {
    return std::min(sc.trials, 300);
  }
  return sc.trials;
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--json") {
      opt.json = true;
    } else if (a == "--check") {
      opt.check = true;
    } else if (a == "--trials") {
      opt.trials = std::atoi(value().c_str());
    } else if (a == "--scenario") {
      opt.scenario = value();
    } else if (a == "--methods") {
      opt.methods = value();
    } else if (a == "--alert-runs") {
      opt.alert_runs = std::atoi(value().c_str());
    } else if (a == "--seed") {
      opt.seed = std::strtoull(value().c_str(), nullptr, 10);
    } else {
      std::fprintf(stderr, "bisect-sim: error: unknown argument %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    return 2;
  }
  const double delta = 0.01;
  bool target_seen = false, target_ok = false;
  if (!opt.json) {
    std::printf("%s", markdown_header().c_str());
  }
  for (Scenario sc : scenarios(opt.quick)) {
    sc.alert_runs = opt.alert_runs;
    if (!opt.scenario.empty() && sc.name.find(opt.scenario) == std::string::npos) {
      continue;
    }
    for (MethodKind m : methods_for(sc, opt)) {
      auto start = std::chrono::steady_clock::now();
      std::vector<TrialResult> results;
      int trials = trials_for(sc, m, opt);
      const char* only = std::getenv("BISECT_SIM_TRIAL"); // debugging aid: run (and trace) this trial alone
      for (int t = only ? std::atoi(only) : 0; t < (only ? std::atoi(only) + 1 : trials); ++t) {
        World world(sc, opt.seed, t);
        results.push_back(run_trial(world, m));
        if (std::getenv("BISECT_SIM_LIST") != nullptr) { // debugging aid: one line per trial
          std::fprintf(stderr, "trial %d correct=%d runs=%d p=%.4f culprit=%zu\n", t, results.back().correct ? 1 : 0,
                       results.back().runs, results.back().p_reported, world.culprit().value_or(0));
        }
      }
      Row row = aggregate(sc, m, results, delta);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%s", opt.json ? (json_row(row) + "\n").c_str() : markdown_row(row).c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "bisect-sim: %s %s: %d trials in %.1fs\n", sc.name.c_str(), row.method.c_str(), trials,
                   secs);
      if (sc.name == k_target_scenario && m == MethodKind::bcb) {
        target_seen = true;
        target_ok = row.accuracy >= 0.99 && row.mean_runs <= 1.5 * row.r_lb;
        std::fprintf(stderr,
                     "bisect-sim: target %s: accuracy %.4f [%.4f, %.4f] (need >= 0.99), runs %.2f vs 1.5 x R_LB = "
                     "%.2f: %s\n",
                     k_target_scenario, row.accuracy, row.acc_low, row.acc_high, row.mean_runs, 1.5 * row.r_lb,
                     target_ok ? "met" : "NOT met");
      }
    }
  }
  if (opt.check && !(target_seen && target_ok)) {
    std::fprintf(stderr, "bisect-sim: --check failed: the BCB target row is %s\n", target_seen ? "not met" : "missing");
    return 1;
  }
  return 0;
}
