#include "daemon/bisection/priors.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "kbuild/relevance.hpp"

#include <algorithm>

namespace bisectd::daemon::bisection {

namespace {

constexpr int k_max_noise_weight = 100; // history beyond this many runs may describe another lab state

} // namespace

// The run sigma of the metric over the watched series and its weight (degrees of freedom), if known.
std::optional<std::pair<double, int>> Priors::series_noise(const storage::BisectionRow& b, const Job& job) {
  auto series = m_series.load(b.tree, job, b.bad, {b.metric});
  if (!series || !series->metrics.contains(b.metric)) {
    return std::nullopt;
  }
  auto estimate = bisect::estimate_noise(series->metrics.at(b.metric));
  // Degrees of freedom of a pooled within-commit sigma: runs minus one per commit.
  int dof = static_cast<int>(estimate.runs) - static_cast<int>(estimate.commits);
  if (estimate.run_sigma <= 0 || dof < 2) {
    return std::nullopt;
  }
  return std::pair{estimate.run_sigma, std::min(dof, k_max_noise_weight)};
}

void Priors::apply_noise(const storage::BisectionRow& b, const Job& job, bisect::Settings& settings) {
  if (job.bisect.noise) {
    settings.noise = job.bisect.noise;
    return;
  }
  auto key = std::to_string(b.id) + ":" + b.range_good + ".." + b.range_bad;
  auto found = m_noise.find(key);
  if (found == m_noise.end()) {
    found = m_noise.emplace(key, series_noise(b, job)).first;
  }
  if (found->second) {
    settings.noise = found->second->first;
    settings.noise_runs = found->second->second;
  }
}

// The confirmed detection that opened `b`: the one of its two heads, or (a rewritten branch, bisected from the
// merge base or a newer measured ancestor) the one that names `b` as its bisection.
std::optional<storage::DetectionRow> Priors::opening_detection(const storage::BisectionRow& b) {
  auto same_range = m_detections.detection(b.tree, b.job, b.good, b.bad);
  if (same_range && *same_range && (*same_range)->state == storage::DetectionState::confirmed) {
    return **same_range;
  }
  if (b.origin != storage::Origin::detect) {
    return std::nullopt;
  }
  if (auto known = m_rewrite_alerts.find(b.id); known != m_rewrite_alerts.end()) {
    return known->second;
  }
  auto rows = m_detections.detections(b.tree);
  if (!rows) {
    return std::nullopt;
  }
  for (const auto& d : *rows) {
    if (d.state == storage::DetectionState::confirmed && d.bisection_id == b.id && d.job == b.job) {
      m_rewrite_alerts.emplace(b.id, d); // read once: the driver asks on every tick
      return d;
    }
  }
  return std::nullopt;
}

void Priors::apply_alert(const storage::BisectionRow& b, bisect::Settings& settings) {
  auto detection = opening_detection(b);
  if (detection && detection->metric == b.metric && detection->change != 0) {
    settings.expected_shift = detection->change;
  }
}

// The sources the build of `commit` compiled, read once; empty (and not remembered) while it has no build.
const std::set<std::string>& Priors::used_sources_of(const std::string& commit, const std::string& hash) {
  static const std::set<std::string> k_none;
  if (auto found = m_used_sources.find(commit); found != m_used_sources.end()) {
    return found->second;
  }
  auto build = m_builds.store().lookup(commit, hash);
  if (!build || build->artifact_dir.empty()) {
    return k_none;
  }
  auto text = base::read_file(build->artifact_dir / kbuild::k_used_sources_file);
  if (!text) {
    return k_none;
  }
  std::set<std::string> used;
  for (auto& path : base::split_lines(*text)) {
    if (!path.empty()) {
      used.insert(std::move(path));
    }
  }
  return m_used_sources[commit] = std::move(used);
}

// The union of the sources the endpoints' builds compiled (empty when neither has a kernel build yet).
std::set<std::string> Priors::used_sources(const Job& job, const std::vector<bisect::Candidate>& chain) {
  std::set<std::string> used;
  auto hash = run::recipe_for(job, "").hash();
  if (!hash || chain.empty()) {
    return used;
  }
  for (const auto* end : {&chain.front(), &chain.back()}) {
    const auto& sources = used_sources_of(end->id, *hash);
    used.insert(sources.begin(), sources.end());
  }
  return used;
}

std::size_t Priors::apply_relevance(const storage::BisectionRow& b, const Job& job,
                                    std::vector<bisect::Candidate>& chain) {
  if (job.build.kind != kbuild::RecipeKind::kernel || chain.size() < 3) {
    return 0;
  }
  auto used = used_sources(job, chain);
  if (used.empty()) {
    return 0;
  }
  std::vector<bool> drop(chain.size(), false);
  auto status = m_repos.with_repo(b.tree, [&](vcs::Repo& repo) -> Status {
    for (std::size_t i = 1; i < chain.size(); ++i) {
      auto& paths = m_changed_paths[chain[i].id]; // empty: not read yet (or a failed read: retried)
      if (paths.empty()) {
        BISECTD_TRY_ASSIGN(paths, repo.changed_paths(chain[i].id));
      }
      drop[i] = chain[i].prior > 0 && !kbuild::touches_build(paths, used);
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

void Priors::apply_history(const storage::BisectionRow& b, const Job& job, bisect::Settings& settings) {
  apply_noise(b, job, settings);
  apply_alert(b, settings);
  settings.cost = m_costs.model(job.name);
}

} // namespace bisectd::daemon::bisection
