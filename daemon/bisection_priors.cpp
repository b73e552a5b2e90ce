#include "daemon/bisection_priors.hpp"

#include "daemon/series.hpp"

#include <algorithm>

namespace bisectd::daemon {

namespace {

constexpr int k_max_noise_weight = 100; // history beyond this many runs may describe another lab state

void apply_noise(Context& context, const storage::BisectionRow& b, const Job& job, bisect::Settings& settings) {
  if (job.bisect.noise) {
    settings.noise = job.bisect.noise;
    return;
  }
  auto series = load_series(context, b.tree, job, b.bad);
  if (!series || !series->metrics.contains(b.metric)) {
    return;
  }
  auto estimate = bisect::estimate_noise(series->metrics.at(b.metric));
  // Degrees of freedom of a pooled within-commit sigma: runs minus one per commit.
  int dof = static_cast<int>(estimate.runs) - static_cast<int>(estimate.commits);
  if (estimate.run_sigma > 0 && dof >= 2) {
    settings.noise = estimate.run_sigma;
    settings.noise_runs = std::min(dof, k_max_noise_weight);
  }
}

void apply_alert(Context& context, const storage::BisectionRow& b, bisect::Settings& settings) {
  auto detection = context.store->detection(b.tree, b.job, b.good, b.bad);
  if (detection && *detection && (*detection)->state == "confirmed" && (*detection)->metric == b.metric &&
      (*detection)->change != 0) {
    settings.expected_shift = (*detection)->change;
  }
}

} // namespace

void apply_history(Context& context, const storage::BisectionRow& b, const Job& job, bisect::Settings& settings) {
  apply_noise(context, b, job, settings);
  apply_alert(context, b, settings);
  settings.cost = context.costs.model(job.name);
}

} // namespace bisectd::daemon
