// e2e-cost: what a whole bisection costs through the daemon's real driver and verifier, on bisect-sim's simulated
// world: every run a bisection causes (endpoints, search, verification, the merged branch's phase), against the
// information bound R_LB. See docs/e2e-cost.md for the rows, the targets and what misses them.
//   e2e-cost [--quick] [--check] [--trials N] [--scenario SUBSTRING] [--seed S] [--no-revert]
#include "bisect-sim/sim_report.hpp"
#include "bisect-sim/sim_world.hpp"
#include "e2e_trial.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace bisectd;

namespace {

constexpr const char* k_headline = "n1000_d2.17_gauss";
constexpr double k_delta = 0.01;

// The targets of every row (issue: a whole bisection's cost): total runs <= 2.5 x R_LB on the headline row,
// <= 4 x elsewhere, p90 <= 2 x mean, accuracy >= 99 %. A row that misses one is listed with the level measured
// (plus slack) as its regression bound, and docs/e2e-cost.md says why it misses.
struct Bounds {
  double ratio = 4.0;      // mean total runs / R_LB
  double p90_factor = 2.0; // p90 / mean
  double accuracy = 0.99;
};
// Measured in docs/e2e-cost.md; the bound is about 15 % above the quick run's level (the quick run is the same in
// the optimised and the sanitizer build: fixed seed). Both misses are whole searches under heavy tails or boot
// offsets on a merged branch: two searches (the mainline's and the branch's), each paying for its robustness, with
// verification now at about 1 x R_LB.
const std::map<std::string, Bounds> k_missed_targets = {
  {"n200_merge_d2.17_outliers5to10", {5.0, 2.0, 0.99}},
  {"n200_merge_d2.17_bootoffsets", {6.8, 2.0, 0.99}},
};

Bounds bounds_for(const std::string& name) {
  auto missed = k_missed_targets.find(name);
  if (missed != k_missed_targets.end()) {
    return missed->second;
  }
  Bounds b;
  b.ratio = name == k_headline ? 2.5 : 4.0;
  return b;
}

struct Options {
  bool quick = false, check = false, revert = true;
  int trials = 0;
  std::string scenario;
  std::uint64_t seed = 20261203;
};

struct Row {
  sim::Scenario sc;
  int trials = 0, correct = 0, unfinished = 0, miscounted = 0;
  double reused = 0, endpoint = 0, search = 0, verification = 0, pairs = 0, merge_phase = 0, total = 0, p90 = 0;
  double builds = 0, boots = 0, r_lb = 0, seconds = 0;
  [[nodiscard]] double accuracy() const { return trials > 0 ? static_cast<double>(correct) / trials : 0; }
  [[nodiscard]] double ratio() const { return r_lb > 0 ? total / r_lb : 0; }
};

sim::Scenario make(const std::string& name, std::size_t n, sim::Noise noise, bool merge, int trials) {
  sim::Scenario s;
  s.name = name;
  s.n = n;
  s.d = 2.17;
  s.noise = noise;
  s.merges = merge ? 1 : 0;
  s.culprit_in_branch = merge;
  s.trials = trials;
  return s;
}

// Every noise model without and with a merged branch holding the culprit. The merge rows search a shorter
// mainline (N = 200: the phase that matters there is the branch's, and 1000 commits would only repeat the
// mainline rows' cost), stated in their names.
std::vector<sim::Scenario> scenarios(const Options& opt) {
  int t = opt.trials > 0 ? opt.trials : opt.quick ? 8 : 100;
  std::vector<sim::Scenario> out;
  out.push_back(make(k_headline, 1000, sim::Noise::gaussian, false, opt.trials > 0 ? t : opt.quick ? 16 : 200));
  out.push_back(make("n1000_d2.17_t3", 1000, sim::Noise::student_t3, false, t));
  out.push_back(make("n1000_d2.17_outliers5to10", 1000, sim::Noise::outliers_wide, false, t));
  out.push_back(make("n1000_d2.17_bimodal", 1000, sim::Noise::bimodal, false, t));
  out.push_back(make("n1000_d2.17_bootoffsets", 1000, sim::Noise::boot_offsets, false, t));
  out.push_back(make("n200_merge_d2.17_gauss", 200, sim::Noise::gaussian, true, t));
  out.push_back(make("n200_merge_d2.17_t3", 200, sim::Noise::student_t3, true, t));
  out.push_back(make("n200_merge_d2.17_outliers5to10", 200, sim::Noise::outliers_wide, true, t));
  out.push_back(make("n200_merge_d2.17_bimodal", 200, sim::Noise::bimodal, true, t));
  out.push_back(make("n200_merge_d2.17_bootoffsets", 200, sim::Noise::boot_offsets, true, t));
  return out;
}

Row run_row(const sim::Scenario& sc, const Options& opt) {
  auto start = std::chrono::steady_clock::now();
  Row row;
  row.sc = sc;
  row.r_lb = sim::information_bound_runs(sc, k_delta);
  std::vector<double> totals;
  for (int t = 0; t < sc.trials; ++t) {
    sim::World world(sc, opt.seed, t);
    auto cost = e2e::run_trial(world, {opt.revert});
    ++row.trials;
    row.correct += cost.correct ? 1 : 0;
    row.unfinished += cost.finished ? 0 : 1;
    row.miscounted += cost.stored_runs == cost.total() ? 0 : 1;
    row.reused += static_cast<double>(cost.reused);
    row.endpoint += static_cast<double>(cost.endpoint);
    row.search += static_cast<double>(cost.search);
    row.verification += static_cast<double>(cost.verification);
    row.pairs += static_cast<double>(cost.pairs);
    row.merge_phase += static_cast<double>(cost.merge_phase);
    row.builds += static_cast<double>(cost.builds);
    row.boots += static_cast<double>(cost.boots);
    totals.push_back(static_cast<double>(cost.total()));
    if (std::getenv("E2E_COST_LIST") != nullptr) { // debugging aid: one line per trial
      std::fprintf(
        stderr, "%s trial %d: stored=%lld correct=%d total=%lld (endpoint %lld search %lld verify %lld merge %lld)\n",
        sc.name.c_str(), t, static_cast<long long>(cost.stored_runs), cost.correct ? 1 : 0,
        static_cast<long long>(cost.total()), static_cast<long long>(cost.endpoint),
        static_cast<long long>(cost.search), static_cast<long long>(cost.verification),
        static_cast<long long>(cost.merge_phase));
    }
  }
  double n = std::max(1, row.trials);
  for (double* v : {&row.reused, &row.endpoint, &row.search, &row.verification, &row.pairs, &row.merge_phase,
                    &row.builds, &row.boots}) {
    *v /= n;
  }
  for (double v : totals) {
    row.total += v / n;
  }
  std::sort(totals.begin(), totals.end());
  row.p90 = totals.empty() ? 0 : totals[static_cast<std::size_t>(0.9 * static_cast<double>(totals.size() - 1))];
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return row;
}

void print_header() {
  std::printf("| scenario | trials | accuracy [95%% Wilson] | reused (alert) | endpoints | search | verification "
              "(pairs + revert) | "
              "merge phase | total mean / p90 | builds | boots | R_LB | total / R_LB | targets |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

// The targets a row misses (empty: all met), against the targets themselves, not the listed bounds.
std::string misses(const Row& r) {
  std::string out;
  double limit = r.sc.name == k_headline ? 2.5 : 4.0;
  if (r.ratio() > limit) {
    out += "total > " + std::to_string(limit).substr(0, 3) + " x R_LB; ";
  }
  if (r.p90 > 2 * r.total) {
    out += "p90 > 2 x mean; ";
  }
  if (r.accuracy() < 0.99) {
    out += "accuracy < 99 %; ";
  }
  if (r.unfinished > 0) {
    out += std::to_string(r.unfinished) + " unfinished; ";
  }
  if (r.miscounted > 0) {
    out += std::to_string(r.miscounted) + " miscounted; ";
  }
  return out.empty() ? "met" : out.substr(0, out.size() - 2);
}

void print_row(const Row& r) {
  auto [low, high] = sim::wilson(r.correct, r.trials);
  std::printf("| %s | %d | %.1f%% [%.1f, %.1f] | %.1f | %.1f | %.1f | %.1f (%.1f + %.1f) | %.1f | %.1f / %.0f | %.1f | "
              "%.1f | %.1f | %.2f | %s |\n",
              r.sc.name.c_str(), r.trials, 100 * r.accuracy(), 100 * low, 100 * high, r.reused, r.endpoint, r.search,
              r.verification, r.pairs, r.verification - r.pairs, r.merge_phase, r.total, r.p90, r.builds, r.boots,
              r.r_lb, r.ratio(), misses(r).c_str());
  std::fflush(stdout);
}

// True when the row keeps its bounds; every failure is printed. The accounting must hold on every row.
bool check_row(const Row& r) {
  auto b = bounds_for(r.sc.name);
  bool ok = true;
  auto fail = [&](const char* what, double value, double bound) {
    std::fprintf(stderr, "e2e-cost: check: %s: %s %.3f beyond %.3f\n", r.sc.name.c_str(), what, value, bound);
    ok = false;
  };
  if (r.ratio() > b.ratio) {
    fail("total / R_LB", r.ratio(), b.ratio);
  }
  if (r.p90 > b.p90_factor * r.total) {
    fail("p90 / mean", r.p90 / std::max(1e-9, r.total), b.p90_factor);
  }
  if (r.accuracy() < b.accuracy) {
    fail("accuracy", r.accuracy(), b.accuracy);
  }
  if (r.unfinished > 0 || r.miscounted > 0) {
    fail("unfinished or miscounted trials", r.unfinished + r.miscounted, 0);
  }
  return ok;
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--check") {
      opt.check = true;
    } else if (a == "--no-revert") {
      opt.revert = false;
    } else if (a == "--trials") {
      opt.trials = std::atoi(value().c_str());
    } else if (a == "--scenario") {
      opt.scenario = value();
    } else if (a == "--seed") {
      opt.seed = std::strtoull(value().c_str(), nullptr, 10);
    } else {
      std::fprintf(stderr, "e2e-cost: error: unknown argument %s\n", a.c_str());
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
  spdlog::set_level(spdlog::level::warn); // the driver's per-bisection info lines would drown the table
  print_header();
  bool ok = true;
  for (const auto& sc : scenarios(opt)) {
    if (!opt.scenario.empty() && sc.name.find(opt.scenario) == std::string::npos) {
      continue;
    }
    auto row = run_row(sc, opt);
    print_row(row);
    std::fprintf(stderr, "e2e-cost: %s: %d trials in %.1fs\n", sc.name.c_str(), row.trials, row.seconds);
    ok = (!opt.check || check_row(row)) && ok;
  }
  return ok ? 0 : 1;
}
