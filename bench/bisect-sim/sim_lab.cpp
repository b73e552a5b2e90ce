// The simulated lab: K machines, the build store, the prebuilder's build slot, the clock and the ledger.
#include "bisect/detect.hpp"
#include "sim_runner.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace bisectd::sim {

Lab::Lab(const World& world, int machines)
    : m_world(world), m_machines(static_cast<std::size_t>(std::max(1, machines))) {}

int Lab::idle() const {
  return static_cast<int>(
    std::count_if(m_machines.begin(), m_machines.end(), [](const Machine& m) { return !m.busy; }));
}

std::vector<std::size_t> Lab::idle_installed() const {
  std::vector<std::size_t> out;
  for (const auto& m : m_machines) {
    if (!m.busy && m.installed) {
      out.push_back(*m.installed);
    }
  }
  return out;
}

std::vector<std::size_t> Lab::running() const {
  std::vector<std::size_t> out;
  for (const auto& m : m_machines) {
    if (m.busy) {
      out.push_back(m.job_id);
    }
  }
  return out;
}

bool Lab::dispatch(const Job& job) {
  Machine* pick = nullptr;
  for (auto& m : m_machines) {
    if (!m.busy && (pick == nullptr || (m.installed == job.id && pick->installed != job.id))) {
      pick = &m;
    }
  }
  if (pick == nullptr || m_failed.contains(job.id)) {
    return false;
  }
  pick->busy = true;
  pick->job_id = job.id;
  pick->pending.clear();
  double t = build_wait(job.id);
  if (m_failed.contains(job.id)) {
    pick->busy_until = m_now + t;
    m_machine_s += t;
    return true;
  }
  if (pick->installed != job.id || job.fresh_boot) {
    t += k_boot_s;
    pick->installed = job.id;
    ++m_visits[job.id];
  }
  int visit = m_visits[job.id] - 1;
  std::string boot = std::to_string(job.id) + "/" + std::to_string(visit);
  for (int r = 0; r < job.runs; ++r) {
    int run = m_runs_at[job.id]++;
    pick->pending.push_back({job.id, m_world.value(job.id, visit, run, m_seq), boot, m_seq, job.verification});
    ++m_seq;
    ++m_runs;
    t += k_run_s;
  }
  pick->busy_until = m_now + t;
  m_machine_s += t;
  return true;
}

void Lab::prebuild(std::size_t id) {
  settle_prebuild();
  if (!m_prebuild && !m_built.contains(id) && !m_failed.contains(id)) {
    m_prebuild = Prebuild{id, m_now + k_build_s};
  }
}

void Lab::settle_prebuild() {
  if (m_prebuild && m_now >= m_prebuild->ready_at) {
    finish_build(m_prebuild->id);
    m_prebuild.reset();
  }
}

void Lab::finish_build(std::size_t id) {
  ++m_builds;
  (m_world.unbuildable(id) ? m_failed : m_built).insert(id);
}

double Lab::build_wait(std::size_t id) {
  settle_prebuild();
  if (m_prebuild && m_prebuild->id == id) {
    double wait = m_prebuild->ready_at - m_now;
    finish_build(id);
    m_prebuild.reset();
    return wait;
  }
  if (m_built.contains(id)) {
    return 0;
  }
  m_prebuild.reset(); // the machine's own build needs the worktree: the slot's prebuild is cancelled
  finish_build(id);
  return k_build_s;
}

void Lab::seed_alert(std::size_t good, std::size_t bad, int visits, int runs_per_visit) {
  for (int v = 0; v < visits; ++v) {
    for (std::size_t id : {good, bad}) {
      m_built.insert(id);
      int visit = m_visits[id]++;
      std::string boot = std::to_string(id) + "/" + std::to_string(visit);
      for (int r = 0; r < runs_per_visit; ++r) {
        int run = m_runs_at[id]++;
        m_visible.push_back({id, m_world.value(id, visit, run, m_seq), boot, m_seq, false, true});
        ++m_seq;
        ++m_alert_runs;
      }
    }
  }
}

int alert_visits(const Scenario& sc, int runs_per_visit) {
  if (sc.alert_runs >= 0) {
    return (sc.alert_runs + runs_per_visit - 1) / runs_per_visit; // fixed by --alert-runs
  }
  bisect::NoiseEstimate noise;
  noise.run_sigma = k_sigma;
  double change = std::max(0.02, 1.0 - std::exp(-k_sigma * sc.d)); // max(threshold, |alert shift|)
  int per_side = std::clamp(noise.confirm_runs_for(change), 5, 20);
  return (per_side + runs_per_visit - 1) / runs_per_visit;
}

bool Lab::advance() {
  Machine* next = nullptr;
  for (auto& m : m_machines) {
    if (m.busy && (next == nullptr || m.busy_until < next->busy_until)) {
      next = &m;
    }
  }
  if (next == nullptr) {
    return false;
  }
  m_now = std::max(m_now, next->busy_until);
  settle_prebuild();
  next->busy = false;
  m_visible.insert(m_visible.end(), next->pending.begin(), next->pending.end());
  next->pending.clear();
  return true;
}

TrialResult Lab::ledger() const {
  TrialResult r;
  r.runs = m_runs;
  r.builds = m_builds;
  r.rounds = m_rounds;
  r.alert_runs = m_alert_runs;
  r.machine_s = m_machine_s;
  double end = m_now;
  for (const auto& m : m_machines) {
    end = std::max(end, m.busy ? m.busy_until : 0.0);
  }
  r.wall_s = end;
  return r;
}

} // namespace bisectd::sim
