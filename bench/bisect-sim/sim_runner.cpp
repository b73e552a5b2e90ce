#include "sim_runner.hpp"

#include "bisect/classic.hpp"
#include "bisect/engine_data.hpp"
#include "bisect/prebuild.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bisectd::sim {

const char* to_string(MethodKind method) {
  switch (method) {
  case MethodKind::bcb: return "bcb";
  case MethodKind::bcb_min_runs: return "bcb_min_runs";
  case MethodKind::bcb_no_prebuild: return "bcb_no_prebuild";
  case MethodKind::bcb_verified: return "bcb+verify10";
  case MethodKind::fixed3: return "fixed_k3";
  case MethodKind::fixed5: return "fixed_k5";
  case MethodKind::fixed10: return "fixed_k10";
  case MethodKind::lkp: return "lkp_k3";
  case MethodKind::pinpoint: return "pinpoint";
  }
  return "?";
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
          std::fprintf(stderr, "  sample %zu %s %.2f %s\n", s.commit, world.bad(ids[s.commit]) ? "bad" : "good",
                       s.value, s.boot.c_str());
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
