#include "sim_runner.hpp"

#include "bisect/classic.hpp"
#include "bisect/detect.hpp"
#include "bisect/engine_data.hpp"
#include "bisect/prebuild.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace bisectd::sim {

const char* to_string(MethodKind method) {
  switch (method) {
  case MethodKind::bcb:
    return "bcb";
  case MethodKind::bcb_min_runs:
    return "bcb_min_runs";
  case MethodKind::bcb_no_prebuild:
    return "bcb_no_prebuild";
  case MethodKind::bcb_verified:
    return "bcb+verify10";
  case MethodKind::fixed3:
    return "fixed_k3";
  case MethodKind::fixed5:
    return "fixed_k5";
  case MethodKind::fixed10:
    return "fixed_k10";
  case MethodKind::lkp:
    return "lkp_k3";
  case MethodKind::pinpoint:
    return "pinpoint";
  }
  return "?";
}

Lab::Lab(const World& world, int machines) : m_world(world), m_machines(static_cast<std::size_t>(std::max(1, machines))) {}

int Lab::idle() const {
  return static_cast<int>(std::count_if(m_machines.begin(), m_machines.end(), [](const Machine& m) { return !m.busy; }));
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
  double t = 0;
  pick->busy = true;
  pick->job_id = job.id;
  pick->pending.clear();
  settle_prebuild();
  if (m_prebuild && m_prebuild->id == job.id) {
    t += m_prebuild->ready_at - m_now; // the machine waits for the prebuild of its commit
    ++m_builds;
    (m_world.unbuildable(job.id) ? m_failed : m_built).insert(job.id);
    m_prebuild.reset();
    if (m_failed.contains(job.id)) {
      pick->busy_until = m_now + t;
      m_machine_s += t;
      return true;
    }
  }
  if (!m_built.contains(job.id)) {
    m_prebuild.reset(); // the machine's own build needs the worktree: the prebuild is cancelled
    t += k_build_s;
    ++m_builds;
    if (m_world.unbuildable(job.id)) {
      m_failed.insert(job.id);
      pick->busy_until = m_now + t;
      m_machine_s += t;
      return true;
    }
    m_built.insert(job.id);
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
  if (!m_prebuild || m_now < m_prebuild->ready_at) {
    return;
  }
  ++m_builds;
  (m_world.unbuildable(m_prebuild->id) ? m_failed : m_built).insert(m_prebuild->id);
  m_prebuild.reset();
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

namespace {

bool is_bcb(MethodKind method) {
  return method == MethodKind::bcb || method == MethodKind::bcb_min_runs || method == MethodKind::bcb_no_prebuild ||
         method == MethodKind::bcb_verified;
}

bisect::Settings settings_for(MethodKind method, const Scenario& sc) {
  bisect::Settings s;
  if (!sc.no_change && std::getenv("BISECT_SIM_NO_ALERT_SHIFT") == nullptr) {
    s.expected_shift = std::expm1(-sc.d * k_sigma); // the alert's shift, as Pinpoint gets its magnitude
  }
  s.noise = k_sigma; // the metric's history gives its run-to-run sigma (documented in docs/bisect-sim.md)
  s.noise_runs = k_history_runs;
  s.threshold = 0.02;
  s.delta = 0.01;
  s.verification_pairs = method == MethodKind::bcb_verified ? 10 : 0;
  bool bcb = is_bcb(method);
  s.method = bcb ? bisect::Method::bcb : bisect::Method::classic;
  s.runs_per_visit = method == MethodKind::fixed5 ? 5 : method == MethodKind::fixed10 ? 10 : 3;
  s.cost = {k_build_s, k_boot_s, k_run_s};
  s.prebuild = method != MethodKind::bcb_no_prebuild; // see docs/bisect-sim.md: the ledger charges builds anyway
  if (method == MethodKind::bcb_min_runs) {
    s.cost = {0, 0, k_run_s}; // minimize runs: builds and boots cost nothing to the chooser (not to the ledger)
  }
  return s;
}

bisect::Step call_method(MethodKind method, const bisect::Problem& problem) {
  if (is_bcb(method) || method == MethodKind::lkp) {
    return bisect::next_step(problem);
  }
  std::string error;
  auto data = bisect::make_chain_data(problem, error);
  return bisect::classic_step(problem, *data, bisect::ClassicRule::nearest_mean);
}

std::vector<std::size_t> indices_of(const std::vector<std::size_t>& ids, const std::vector<std::size_t>& wanted) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (std::find(wanted.begin(), wanted.end(), ids[i]) != wanted.end()) {
      out.push_back(i);
    }
  }
  return out;
}

// The daemon's prebuilder: while the round just dispatched runs, the build slot builds the likeliest next pick.
void prebuild_next(Lab& lab, const std::vector<std::size_t>& ids, bisect::Problem& problem) {
  if (problem.settings.method != bisect::Method::bcb || !problem.settings.prebuild) {
    return;
  }
  problem.settings.in_flight = indices_of(ids, lab.running());
  for (std::size_t i : bisect::prebuild_candidates(problem, 2)) { // as daemon/prebuilder.cpp asks
    lab.prebuild(ids[i]); // the slot takes the first; the second waits for a later round
  }
}

// Runs the engine over the chain `ids` until a verdict; returns the final step.
bisect::Step bisect_chain(const World& world, Lab& lab, const std::vector<std::size_t>& ids, MethodKind method) {
  bisect::Problem problem;
  problem.settings = settings_for(method, world.scenario());
  for (std::size_t id : ids) {
    problem.chain.push_back({std::to_string(id), world.relevant(id) ? 1.0 : 0.0, false, std::nullopt});
  }
  for (int guard = 0; guard < 5000; ++guard) {
    if (lab.idle() == 0) {
      lab.advance();
      continue;
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      problem.chain[i].skipped = lab.known_unbuildable(ids[i]);
    }
    problem.samples.clear();
    for (const auto& s : lab.samples()) {
      auto at = std::find(ids.begin(), ids.end(), s.id);
      if (at != ids.end()) {
        problem.samples.push_back({static_cast<std::size_t>(at - ids.begin()), s.value, s.boot, s.seq, s.verification});
      }
    }
    problem.settings.idle_machines = lab.idle();
    problem.settings.in_flight = indices_of(ids, lab.running());
    problem.settings.installed = indices_of(ids, lab.idle_installed());
    problem.settings.built.clear();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (lab.built(ids[i])) {
        problem.settings.built.push_back(i);
      }
    }
    auto step = call_method(method, problem);
    if (std::getenv("BISECT_SIM_TRACE") != nullptr) { // debugging aid: the engine's reasoning per step
      for (const auto& line : step.trace) {
        std::fprintf(stderr, "  [%zu samples] %s\n", problem.samples.size(), line.c_str());
      }
    }
    if (step.verdict != bisect::Verdict::need_runs) {
      if (std::getenv("BISECT_SIM_TRACE") != nullptr) {
        for (const auto& s : problem.samples) {
          std::fprintf(stderr, "  sample %zu %s %.2f %s\n", s.commit, world.bad(ids[s.commit]) ? "bad" : "good", s.value,
                       s.boot.c_str());
        }
      }
      return step;
    }
    if (step.picks.empty()) {
      if (!lab.advance()) {
        return step;
      }
      continue;
    }
    lab.count_round();
    for (const auto& p : step.picks) {
      lab.dispatch({ids[p.commit], p.runs, p.verification, p.fresh_boot});
    }
    prebuild_next(lab, ids, problem);
    if (lab.idle() == 0 || lab.running().size() > 0) {
      lab.advance();
    }
  }
  bisect::Step stuck;
  stuck.verdict = bisect::Verdict::budget_exhausted;
  return stuck;
}

// The set answer the data can force when the culprit's nearest relevant predecessors fail to build: the culprit
// and those predecessors (irrelevant commits are never members). Empty when nothing forces a set.
std::vector<std::size_t> forced_set(const World& world, const std::vector<std::size_t>& ids, std::size_t culprit_at) {
  std::vector<std::size_t> set{culprit_at};
  for (std::size_t i = culprit_at; i-- > 1;) {
    if (!world.relevant(ids[i])) {
      continue;
    }
    if (!world.unbuildable(ids[i])) {
      break;
    }
    set.insert(set.begin(), i);
  }
  return set.size() > 1 ? set : std::vector<std::size_t>{};
}

// What a method's final step answered: the culprit (found), or, for an ambiguous verdict, the culprit when the
// credible set is exactly the set the unbuildable commits force (git bisect's "could be any of").
struct Answer {
  std::optional<std::size_t> culprit;
  double p = 0;
  bool set = false;
};

Answer answer_of(const World& world, const std::vector<std::size_t>& ids, const bisect::Step& step) {
  Answer a;
  if (step.verdict == bisect::Verdict::found && step.culprit) {
    a.culprit = ids[*step.culprit];
    a.p = step.p_culprit;
  }
  if (step.verdict == bisect::Verdict::ambiguous && world.culprit()) {
    auto at = std::find(ids.begin(), ids.end(), *world.culprit());
    if (at != ids.end() && !step.credible_set.empty() &&
        step.credible_set == forced_set(world, ids, static_cast<std::size_t>(at - ids.begin()))) {
      a.culprit = *world.culprit();
      a.set = true;
      for (std::size_t i : step.credible_set) {
        a.p += step.posterior[i];
      }
    }
  }
  return a;
}

} // namespace

TrialResult run_trial(const World& world, MethodKind method) {
  const Scenario& sc = world.scenario();
  Lab lab(world, sc.k_machines);
  // The detector's confirmation: same world, before the bisection, in visits of the job's runs per visit.
  lab.seed_alert(0, sc.n, alert_visits(sc, k_runs_per_visit), k_runs_per_visit);
  std::vector<std::size_t> mainline(sc.n + 1);
  for (std::size_t i = 0; i <= sc.n; ++i) {
    mainline[i] = i;
  }
  Answer answer;
  if (method == MethodKind::pinpoint) {
    auto culprits = run_pinpoint(world, lab, mainline);
    if (culprits.size() == 1) {
      answer.culprit = culprits.front();
      answer.p = 1.0; // Pinpoint reports no probability; counted as a certain claim for calibration
    }
  } else {
    answer = answer_of(world, mainline, bisect_chain(world, lab, mainline, method));
  }
  // The culprit is a merge: recurse into its branch with the merge base as good and the branch tip as bad.
  for (std::size_t b = 0; answer.culprit && !answer.set && b < world.branches().size(); ++b) {
    if (world.branches()[b].first != *answer.culprit || method == MethodKind::pinpoint) {
      continue;
    }
    std::vector<std::size_t> branch{world.fork_of(b)};
    branch.insert(branch.end(), world.branches()[b].second.begin(), world.branches()[b].second.end());
    Answer inner = answer_of(world, branch, bisect_chain(world, lab, branch, method));
    if (inner.culprit) {
      inner.p *= answer.p;
      answer = inner;
    }
  }
  TrialResult r = lab.ledger();
  r.reported_culprit = answer.culprit.has_value();
  r.p_reported = answer.p;
  r.set_answer = answer.set;
  r.correct = world.culprit() ? answer.culprit == world.culprit() : !answer.culprit;
  return r;
}

} // namespace bisectd::sim
