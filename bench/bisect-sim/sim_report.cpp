#include "sim_report.hpp"

#include "bisect/bcb_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bisectd::sim {

std::pair<double, double> wilson(int k, int n) {
  if (n == 0) {
    return {0, 1};
  }
  const double z = 1.959964;
  double p = static_cast<double>(k) / n;
  double den = 1 + z * z / n;
  double mid = (p + z * z / (2.0 * n)) / den;
  double half = z * std::sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / den;
  return {std::max(0.0, mid - half), std::min(1.0, mid + half)};
}

namespace {

void calibration(const std::vector<TrialResult>& results, Row& row) {
  double sum_p[10] = {}, sum_ok[10] = {};
  int count[10] = {};
  for (const auto& r : results) {
    if (!r.reported_culprit) {
      continue;
    }
    int bin = std::clamp(static_cast<int>(r.p_reported * 10), 0, 9);
    sum_p[bin] += r.p_reported;
    sum_ok[bin] += r.correct ? 1 : 0;
    ++count[bin];
  }
  int total = 0;
  for (int b = 0; b < 10; ++b) {
    if (count[b] == 0) {
      continue;
    }
    double err = std::abs(sum_p[b] - sum_ok[b]) / count[b];
    row.ece += err * count[b];
    total += count[b];
    if (count[b] >= 10) {
      row.calibration_error = std::max(row.calibration_error, err);
    }
  }
  row.ece = total > 0 ? row.ece / total : 0;
}

} // namespace

double information_bound_runs(const Scenario& sc, double delta) {
  // Genie bound on the relevant candidates (irrelevant commits carry no prior mass).
  double candidates = std::max(2.0, static_cast<double>(sc.n) * (1 - sc.irrelevant));
  double bits = std::log2(candidates) - bisect::math::binary_entropy(delta) - delta * std::log2(candidates - 1);
  return sc.no_change ? 0 : bits / bisect::math::biawgn_capacity(sc.d);
}

Row aggregate(const Scenario& sc, MethodKind method, const std::vector<TrialResult>& results, double delta) {
  Row row;
  row.scenario = sc.name;
  row.method = to_string(method);
  row.noise = to_string(sc.noise);
  row.n = sc.n;
  row.d = sc.d;
  row.k_machines = sc.k_machines;
  row.trials = static_cast<int>(results.size());
  int ok = 0, named = 0;
  std::vector<double> runs;
  for (const auto& r : results) {
    ok += r.correct ? 1 : 0;
    named += r.reported_culprit ? 1 : 0;
    runs.push_back(r.runs);
    row.mean_runs += r.runs;
    row.mean_builds += r.builds;
    row.machine_hours += r.machine_s / 3600;
    row.wall_hours += r.wall_s / 3600;
    row.rounds += r.rounds;
    row.alert_runs += r.alert_runs;
    row.set_answers += r.set_answer ? 1 : 0;
  }
  double n = std::max<double>(1, results.size());
  row.accuracy = ok / n;
  std::tie(row.acc_low, row.acc_high) = wilson(ok, row.trials);
  row.mean_runs /= n;
  row.mean_builds /= n;
  row.machine_hours /= n;
  row.wall_hours /= n;
  row.rounds /= n;
  row.alert_runs /= n;
  row.set_answers /= n;
  std::sort(runs.begin(), runs.end());
  row.p90_runs = runs.empty() ? 0 : runs[static_cast<std::size_t>(0.9 * (runs.size() - 1))];
  row.false_culprit_rate = sc.no_change ? named / n : 0;
  row.r_lb = information_bound_runs(sc, delta);
  double cap = bisect::math::biawgn_capacity(sc.d);
  row.rho_lb = sc.no_change ? 0 : row.r_lb * cap / std::min(sc.k_machines * cap, std::log2(sc.k_machines + 1.0));
  calibration(results, row);
  return row;
}

std::string json_row(const Row& r) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"scenario\":\"%s\",\"method\":\"%s\",\"n\":%zu,\"d\":%g,\"noise\":\"%s\",\"k_machines\":%d,"
                "\"trials\":%d,\"accuracy\":%.4f,\"accuracy_low\":%.4f,\"accuracy_high\":%.4f,\"mean_runs\":%.2f,"
                "\"p90_runs\":%.0f,\"mean_builds\":%.2f,\"machine_hours\":%.2f,\"wall_hours\":%.2f,\"rounds\":%.2f,"
                "\"r_lb\":%.2f,\"runs_over_r_lb\":%.3f,\"rho_lb\":%.2f,\"calibration_error\":%.4f,\"ece\":%.4f,"
                "\"false_culprit_rate\":%.4f,\"alert_runs_given\":%.1f,\"set_answers\":%.4f}",
                r.scenario.c_str(), r.method.c_str(), r.n, r.d, r.noise.c_str(), r.k_machines, r.trials, r.accuracy,
                r.acc_low, r.acc_high, r.mean_runs, r.p90_runs, r.mean_builds, r.machine_hours, r.wall_hours, r.rounds,
                r.r_lb, r.r_lb > 0 ? r.mean_runs / r.r_lb : 0.0, r.rho_lb, r.calibration_error, r.ece,
                r.false_culprit_rate, r.alert_runs, r.set_answers);
  return buf;
}

std::string markdown_header() {
  return "| scenario | method | trials | accuracy [95% Wilson] | runs mean/p90 | builds | machine-h | wall-h | rounds "
         "| runs/R_LB | rounds/rho_LB | calib. err (max decile / ECE) | alert runs given |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
}

std::string markdown_row(const Row& r) {
  char buf[512];
  char extra[64] = "";
  if (r.false_culprit_rate > 0 || r.r_lb == 0) {
    std::snprintf(extra, sizeof extra, " (named a culprit %.1f%%)", 100 * r.false_culprit_rate);
  } else if (r.set_answers > 0) {
    std::snprintf(extra, sizeof extra, " (%.1f%% as a forced set)", 100 * r.set_answers);
  }
  std::snprintf(buf, sizeof buf,
                "| %s | %s | %d | %.1f%% [%.1f, %.1f]%s | %.1f / %.0f | %.1f | %.1f | %.1f | %.1f | %s | %s | %.3f / "
                "%.3f | %.0f |\n",
                r.scenario.c_str(), r.method.c_str(), r.trials, 100 * r.accuracy, 100 * r.acc_low, 100 * r.acc_high,
                extra, r.mean_runs, r.p90_runs, r.mean_builds, r.machine_hours, r.wall_hours, r.rounds,
                r.r_lb > 0 ? std::to_string(r.mean_runs / r.r_lb).substr(0, 4).c_str() : "-",
                r.rho_lb > 0 ? std::to_string(r.rounds / r.rho_lb).substr(0, 4).c_str() : "-", r.calibration_error,
                r.ece, r.alert_runs);
  return buf;
}

} // namespace bisectd::sim
