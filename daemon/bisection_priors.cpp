#include "daemon/bisection_priors.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "daemon/series.hpp"
#include "daemon/visit_runner.hpp"
#include "kbuild/relevance.hpp"

#include <algorithm>
#include <set>

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

// The union of the sources the endpoints' builds compiled (empty when neither has a kernel build yet).
std::set<std::string> used_sources(Context& context, const Job& job, const std::vector<bisect::Candidate>& chain) {
  std::set<std::string> used;
  auto hash = recipe_for(job, "").hash();
  if (!hash || chain.empty()) {
    return used;
  }
  for (const auto* end : {&chain.front(), &chain.back()}) {
    auto build = context.build_store->lookup(end->id, *hash);
    if (!build || build->artifact_dir.empty()) {
      continue;
    }
    if (auto text = base::read_file(build->artifact_dir / kbuild::k_used_sources_file)) {
      for (auto& path : base::split_lines(*text)) {
        if (!path.empty()) {
          used.insert(std::move(path));
        }
      }
    }
  }
  return used;
}

} // namespace

std::size_t apply_relevance(Context& context, const storage::BisectionRow& b, const Job& job,
                            std::vector<bisect::Candidate>& chain, ChangedPathsCache& cache) {
  if (job.build.kind != kbuild::RecipeKind::kernel || chain.size() < 3) {
    return 0;
  }
  auto used = used_sources(context, job, chain);
  if (used.empty()) {
    return 0;
  }
  std::vector<bool> drop(chain.size(), false);
  auto status = context.trees->with_repo(b.tree, [&](vcs::Repository& repo) -> Status {
    for (std::size_t i = 1; i < chain.size(); ++i) {
      if (!cache.contains(chain[i].id)) {
        BISECTD_TRY_ASSIGN(cache[chain[i].id], repo.changed_paths(chain[i].id));
      }
      drop[i] = chain[i].prior > 0 && !kbuild::touches_build(cache[chain[i].id], used);
    }
    return {};
  });
  std::size_t kept = 0;
  for (std::size_t i = 1; i < chain.size(); ++i) {
    kept += chain[i].prior > 0 && !drop[i] ? 1 : 0;
  }
  if (!status || kept == 0) {
    return 0; // unknown diffs, or a shift no relevant commit could explain: let the evidence decide
  }
  std::size_t dropped = 0;
  for (std::size_t i = 1; i < chain.size(); ++i) {
    if (drop[i]) {
      chain[i].prior = 0;
      ++dropped;
    }
  }
  return dropped;
}

void apply_history(Context& context, const storage::BisectionRow& b, const Job& job, bisect::Settings& settings) {
  apply_noise(context, b, job, settings);
  apply_alert(context, b, settings);
  settings.cost = context.costs.model(job.name);
}

} // namespace bisectd::daemon
