#pragma once
// Aggregation of trials into one row per (scenario, method): accuracy with a Wilson interval, cost, bounds,
// calibration; rendered as a Markdown table or JSON lines.

#include "sim_runner.hpp"
#include "sim_world.hpp"

#include <string>
#include <vector>

namespace bisectd::sim {

struct Row {
  std::string scenario, method, noise;
  std::size_t n = 0;
  double d = 0;
  int k_machines = 1, trials = 0;
  double accuracy = 0, acc_low = 0, acc_high = 0;
  double mean_runs = 0, p90_runs = 0, mean_builds = 0, machine_hours = 0, wall_hours = 0, rounds = 0;
  double r_lb = 0, rho_lb = 0;
  double calibration_error = 0;  // max over deciles (with >= 10 trials) of |mean reported P - accuracy|
  double ece = 0;                // trial-weighted mean of the same
  double false_culprit_rate = 0; // no-change scenario: share of trials that named a culprit
  double set_answers = 0;        // share of trials answered with the set the unbuildable commits force
  double alert_runs = 0;         // alert confirmation runs handed to the method per trial (not in mean_runs)
};

// Wilson score interval for k successes in n trials at 95 %.
std::pair<double, double> wilson(int k, int n);

// The information bound R_LB: the fewest runs any method needs on average to name the culprit among the scenario's
// relevant candidates with error delta, each run carrying at most the capacity of a binary-input gaussian channel
// at signal-to-noise d (0 for a no-change scenario).
double information_bound_runs(const Scenario& scenario, double delta);

Row aggregate(const Scenario& scenario, MethodKind method, const std::vector<TrialResult>& results, double delta);

std::string json_row(const Row& row);
std::string markdown_header();
std::string markdown_row(const Row& row);

} // namespace bisectd::sim
