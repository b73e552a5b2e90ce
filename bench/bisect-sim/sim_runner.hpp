#pragma once
// Runs one method on one simulated trial: a discrete-event lab with K machines, builds, boots and runs that
// cost time, and every requested run counted (endpoints, verification and runs still in flight at the end).

#include "bisect/engine.hpp"
#include "sim_world.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bisectd::sim {

enum class MethodKind { bcb, bcb_min_runs, bcb_no_prebuild, bcb_verified, fixed3, fixed5, fixed10, lkp, pinpoint };
const char* to_string(MethodKind method);

struct TrialResult {
  bool correct = false;                 // exact culprit (or, without a culprit, no culprit reported)
  bool reported_culprit = false;        // verdict found, or the set the unbuildable commits force (set_answer)
  bool set_answer = false;              // answered "the first bad commit could be any of" that forced set
  double p_reported = 0;                // the method's P(culprit) for its answer
  int runs = 0, builds = 0, rounds = 0; // the bisection's own (alert runs not included)
  int alert_runs = 0;                   // confirmation runs the alert handed over (not counted in runs)
  double machine_s = 0, wall_s = 0;
};

struct SimSample {
  std::size_t id; // world commit id
  double value;
  std::string boot;
  std::int64_t seq;
  bool verification;
  bool alert = false; // the detector's confirmation run, stored before the bisection opened
};

// The lab: machines, build store, the clock and the ledger of runs.
class Lab {
public:
  Lab(const World& world, int machines);
  struct Job {
    std::size_t id;
    int runs;
    bool verification;
    bool fresh_boot = false;
  };
  // Starts `job` on an idle machine (the one with the build installed if any); false when none is idle.
  bool dispatch(const Job& job);
  // The alert's interleaved confirmation before the bisection opens (daemon/watcher.cpp): `visits` boots each
  // of `good` and `bad`, alternating, `runs_per_visit` runs per boot, in time before any bisection run. Visible
  // as samples, never charged to the ledger (runs, builds, machine time); both builds exist afterwards and
  // nothing stays installed.
  void seed_alert(std::size_t good, std::size_t bad, int visits, int runs_per_visit);
  int alert_runs() const { return m_alert_runs; }
  // Starts building `id` on the lab's build slot (the daemon's prebuilder: one build at a time, off the machines)
  // unless the slot is busy or `id` is built or known unbuildable. A machine that needs the slot's commit waits
  // for it; one that must build another commit cancels it (they share the worktree). Counted as a build when done.
  void prebuild(std::size_t id);
  // Completes the earliest running job; false when nothing runs.
  bool advance();
  std::vector<std::size_t> idle_installed() const; // ids installed on idle machines
  std::vector<std::size_t> running() const;        // ids with jobs running
  int idle() const;
  bool known_unbuildable(std::size_t id) const { return m_failed.contains(id); }
  bool built(std::size_t id) const { return m_built.contains(id); }
  const std::vector<SimSample>& samples() const { return m_visible; }
  TrialResult ledger() const;
  void count_round() { ++m_rounds; }

private:
  struct Machine {
    double busy_until = 0;
    bool busy = false;
    std::optional<std::size_t> installed;
    std::vector<SimSample> pending;
    std::size_t job_id = 0;
  };
  struct Prebuild {
    std::size_t id;
    double ready_at;
  };
  void settle_prebuild();            // a prebuild whose time has come is built (or known unbuildable)
  void finish_build(std::size_t id); // counts a build of `id` and records its outcome
  // Seconds a machine spends before it can boot `id`: the rest of the slot's prebuild of it, its own build
  // (cancelling the slot's prebuild of another commit), or 0 when built.
  double build_wait(std::size_t id);

  const World& m_world;
  std::vector<Machine> m_machines;
  std::optional<Prebuild> m_prebuild;
  std::set<std::size_t> m_built, m_failed;
  std::map<std::size_t, int> m_visits, m_runs_at;
  std::vector<SimSample> m_visible;
  double m_now = 0, m_machine_s = 0;
  std::int64_t m_seq = 0;
  int m_runs = 0, m_builds = 0, m_rounds = 0, m_alert_runs = 0;
};

// Boots per side of the alert's confirmation, as the daemon's watcher sizes it: max(5, the detector's
// confirm_runs_for(|alert shift|) at the run sigma), capped at 20, in visits of `runs_per_visit` runs.
int alert_visits(const Scenario& scenario, int runs_per_visit);

// One trial of `method` on `world` (mainline, then the merged branch when the culprit is a merge).
TrialResult run_trial(const World& world, MethodKind method);

// Pinpoint-like baseline (sim_pinpoint.cpp): bisection over `ids` with `lab`; returns the culprit ids reported.
std::vector<std::size_t> run_pinpoint(const World& world, Lab& lab, const std::vector<std::size_t>& ids);

} // namespace bisectd::sim
