#pragma once
// The simulated world of bisect-sim: a scenario (history, noise, lab) and one trial's ground truth, with common
// random numbers: the noise of run r at commit i, the offset of visit v at commit i and the drift at time t are
// fixed per (seed, trial), so every method sees the same world.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::sim {

enum class Noise { gaussian, student_t3, outliers, outliers_wide, bimodal, boot_offsets, drift };

struct Scenario {
  std::string name;
  std::size_t n = 1000; // candidate commits (chain has n + 1 entries: good + n)
  double d = 2.17;      // shift / run-to-run sigma
  Noise noise = Noise::gaussian;
  int k_machines = 1;
  double unbuildable = 0;         // fraction of commits that fail to build (found out by trying)
  double irrelevant = 0;          // fraction of commits with prior 0 (touch no built file)
  bool no_change = false;         // a false alert: no culprit at all
  int merges = 0;                 // merged branches in the history (recursion into the culprit merge)
  bool culprit_in_branch = false; // with merges: the culprit is drawn from the branches' commits only
  int trials = 200;
  int alert_runs = -1; // alert confirmation runs per endpoint given to every method; -1: as the
                       // daemon sizes them (alert_visits), 0: none
};

const char* to_string(Noise noise);

// One trial's truth and noise streams.
class World {
public:
  World(const Scenario& scenario, std::uint64_t seed, int trial);
  const Scenario& scenario() const { return m_scenario; }
  std::optional<std::size_t> culprit() const { return m_culprit; } // first bad commit (chain index), if any
  bool unbuildable(std::size_t i) const { return m_unbuildable[i]; }
  bool relevant(std::size_t i) const { return m_relevant[i]; }
  // Metric value of run `run` (0-based per commit) in visit `visit` (0-based per commit) at time `seq`.
  double value(std::size_t commit, int visit, int run, std::int64_t seq) const;
  // (merge commit on the mainline, branch commit ids oldest first) per merged branch.
  const std::vector<std::pair<std::size_t, std::vector<std::size_t>>>& branches() const { return m_branches; }
  bool bad(std::size_t commit) const;
  // Mainline commit the branch forked from (its merge base).
  std::size_t fork_of(std::size_t branch) const;

private:
  double unit(std::uint64_t a, std::uint64_t b, std::uint64_t c) const;
  double gauss(std::uint64_t a, std::uint64_t b, std::uint64_t c) const;
  double drift_at(std::int64_t seq) const;

  Scenario m_scenario;
  std::uint64_t m_key;
  std::optional<std::size_t> m_culprit;
  std::vector<bool> m_unbuildable, m_relevant;
  std::vector<double> m_drift;
  // (merge commit on the mainline, branch commits as ids >= n + 1) for merge scenarios.
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> m_branches;
};

constexpr double k_sigma = 0.03; // relative run-to-run noise of every scenario
constexpr double k_run_s = 300, k_boot_s = 180, k_build_s = 600;
constexpr int k_runs_per_visit = 3; // the job's runs per visit (daemon default job.runs)
constexpr int k_history_runs = 30;  // runs of the metric's history behind its run sigma (ten points x 3 runs)

} // namespace bisectd::sim
