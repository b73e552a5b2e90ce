#pragma once
// What the job's history tells a bisection before (and while) it runs: the metric's run-to-run noise from the
// watched series, the shift the watcher's confirmed alert measured, this lab's build/boot/run costs, and which
// commits a kernel build cannot see (they touch no source it compiled).

#include "bisect/engine.hpp"
#include "daemon/core/job.hpp"
#include "daemon/core/tree_repos.hpp"
#include "daemon/run/builds.hpp"
#include "daemon/run/cost_history.hpp"
#include "daemon/watch/series.hpp"
#include "storage/detection_store.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::daemon::bisection {

class Priors {
public:
  Priors(watch::SeriesReader& series, storage::DetectionStore& detections, run::CostHistory& costs,
         const run::Builds& builds, TreeRepos& repos)
      : m_series(series), m_detections(detections), m_costs(costs), m_builds(builds), m_repos(repos) {}

  // Fills settings.noise/noise_runs (unless the job fixes `bisect.noise`), settings.expected_shift (bisections
  // opened by a confirmed detection) and settings.cost. Missing history leaves the engine's defaults.
  void apply_history(const storage::BisectionRow& b, const Job& job, bisect::Settings& settings);

  // Kernel recipe: gives prior 0 (never built) to the chain's commits that touch no source the job's builds of the
  // endpoints compiled (kbuild's .cmd files, kbuild/relevance.hpp) nor any kbuild machinery. Keeps every prior
  // when nothing is known yet or when no commit would be left. Returns how many commits it set to 0.
  std::size_t apply_relevance(const storage::BisectionRow& b, const Job& job, std::vector<bisect::Candidate>& chain);

private:
  std::optional<std::pair<double, int>> series_noise(const storage::BisectionRow& b, const Job& job);
  void apply_noise(const storage::BisectionRow& b, const Job& job, bisect::Settings& settings);
  void apply_alert(const storage::BisectionRow& b, bisect::Settings& settings);
  std::optional<storage::DetectionRow> opening_detection(const storage::BisectionRow& b);
  const std::set<std::string>& used_sources_of(const std::string& commit, const std::string& hash);
  std::set<std::string> used_sources(const Job& job, const std::vector<bisect::Candidate>& chain);

  watch::SeriesReader& m_series;
  storage::DetectionStore& m_detections;
  run::CostHistory& m_costs;
  const run::Builds& m_builds;
  TreeRepos& m_repos;
  // Computed once and reused on every tick (the driver advances each bisection twice a second): a commit's diff
  // and a build's used sources never change, and the series' noise is read once per bisection range.
  std::map<std::string, std::vector<std::string>> m_changed_paths;      // commit -> paths changed vs its first parent
  std::map<std::string, std::set<std::string>> m_used_sources;          // built commit -> sources its build compiled
  std::map<std::string, std::optional<std::pair<double, int>>> m_noise; // "id:good..bad" -> (sigma, weight)
  std::map<std::int64_t, storage::DetectionRow> m_rewrite_alerts;       // bisection id -> its detection, once found
};

} // namespace bisectd::daemon::bisection
