#include "e2e_trial.hpp"

#include "bisect-sim/sim_runner.hpp"
#include "daemon/bisection/driver.hpp"
#include "daemon/verify/verifier.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "support/temp_dir.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace bisectd::e2e {

namespace {

using test::FakeRepo;

// The world's commits as a git history: the mainline 0..n (0 good, n bad), and each merged branch forked from
// its merge base and merged by its mainline commit (first parent: the mainline before it, second: the branch tip).
struct History {
  std::vector<std::string> sha_of_id;
  std::map<std::string, std::size_t> id_of_sha;
};

History make_history(FakeRepo& repo, const sim::World& world) {
  const auto& sc = world.scenario();
  History h;
  std::size_t total = sc.n + 1;
  for (const auto& branch : world.branches()) {
    total += branch.second.size();
  }
  h.sha_of_id.resize(total);
  auto record = [&](std::size_t id, const std::string& sha) {
    h.sha_of_id[id] = sha;
    h.id_of_sha[sha] = id;
  };
  for (std::size_t i = 0; i <= sc.n; ++i) {
    std::vector<std::string> parents;
    if (i > 0) {
      parents.push_back(h.sha_of_id[i - 1]);
    }
    for (std::size_t b = 0; b < world.branches().size(); ++b) {
      if (world.branches()[b].first != i) {
        continue;
      }
      std::string parent = h.sha_of_id[world.fork_of(b)];
      for (std::size_t id : world.branches()[b].second) {
        parent = repo.add("b" + std::to_string(id), {parent});
        record(id, parent);
      }
      parents.push_back(parent);
    }
    record(i, repo.add("c" + std::to_string(i), parents));
  }
  return h;
}

daemon::Job make_job(const TrialOptions& options) {
  daemon::Job job = test::bench_job();
  job.runs = sim::k_runs_per_visit;
  job.metrics.threshold = 0.02;
  job.bisect.noise = sim::k_sigma; // the metric's history gives its run sigma, as in bisect-sim
  job.bisect.delta = 0.01;
  job.verify = daemon::VerifySpec{}; // the daemon's defaults: confirm pairs, revert, plausibility (layout needs
                                     // a layout_env for a command recipe: none here)
  job.verify.revert = options.revert;
  return job;
}

// The lab's runs from the world: a commit's visits are numbered in the order they happen (each visit one boot, so
// boot offsets apply per visit), and the reverted head is a commit of its own at the good level.
class WorldSampler {
public:
  WorldSampler(const sim::World& world, const History& history) : m_world(world), m_history(history) {}
  double operator()(const storage::RequestRow& r, int run, const std::string& boot) {
    auto found = m_history.id_of_sha.find(r.commit);
    std::size_t id = found != m_history.id_of_sha.end() ? found->second : m_history.sha_of_id.size() + 1;
    auto visit = m_visit_of_boot.find(boot);
    if (visit == m_visit_of_boot.end()) {
      visit = m_visit_of_boot.emplace(boot, m_visits[id]++).first;
    }
    return m_world.value(id, visit->second, run, m_seq++);
  }

private:
  const sim::World& m_world;
  const History& m_history;
  std::map<std::size_t, int> m_visits;
  std::map<std::string, int> m_visit_of_boot;
  std::int64_t m_seq = 0;
};

// What the real daemon's parts need, on fakes: an in-memory store and history, one `local` machine.
struct Daemon {
  explicit Daemon(const TrialOptions& options) : jobs(make_job(options)) {
    storage::TreeRow tree;
    tree.name = "sim";
    tree.branches = {"master"};
    tree.job = "bench";
    (void)store.add_tree(tree, storage::JobRow{"bench", "bench.yaml", "name: bench", 0});
  }
  test::TempDir tmp;
  test::MemoryStore store;
  test::FakeTrees trees{tmp.path()};
  test::FakeJobs jobs;
  test::FakeLab lab{{{"m0", "local", "local", "", false, "", false, "", 1}}};
  kbuild::BuildStore build_store{tmp.path() / "builds"};
  test::FakeBuilder builder;
  daemon::run::CostHistory costs;
  daemon::run::Builds builds{trees, build_store, store, costs, {builder, builder}};
  daemon::watch::SeriesReader series{trees, store, store};
  daemon::bisection::Priors priors{series, store, costs, builds, trees};
  daemon::bisection::BuildEquivalence equivalence{build_store, store};
  daemon::verify::CulpritVerifier verifier{{store, store, store, trees, builds}};
  test::FakeReporter reporter;
  daemon::bisection::Driver driver{
    {store, store, store, store}, {trees, jobs, lab, priors, equivalence, nullptr, verifier, reporter}, nullptr};
};

// The watcher's confirmation before the bisection opens: a confirmed detection with the alert's shift, and its
// interleaved runs of good and bad (requests of no bisection), sized as bisect-sim sizes them.
void seed_alert(Daemon& d, test::SimulatedLab& lab, const sim::World& world, const History& h) {
  const auto& sc = world.scenario();
  storage::DetectionRow detection;
  detection.tree = "sim";
  detection.branch = "master";
  detection.job = "bench";
  detection.good = h.sha_of_id[0];
  detection.bad = h.sha_of_id[sc.n];
  detection.metric = "ops";
  auto id = d.store.add_detection(detection);
  double shift = std::expm1(-sc.d * sim::k_sigma);
  (void)d.store.set_detection_state(id.value_or(0), storage::DetectionState::confirmed, 0, shift);
  int visits = sim::alert_visits(sc, sim::k_runs_per_visit);
  for (int v = 0; v < visits; ++v) {
    for (const auto& commit : {detection.good, detection.bad}) {
      storage::RequestRow r;
      r.tree = "sim";
      r.job = "bench";
      r.commit = commit;
      r.purpose = storage::Purpose::confirm;
      r.detection_id = id.value_or(0);
      r.machine_group = "local";
      r.runs = sim::k_runs_per_visit;
      (void)d.store.enqueue(r);
      lab.run_queued("local");
    }
  }
}

// Sorts the bisection's stored runs into phases. Requests made after the search moved into the merged branch
// (ids above `merge_mark`) are the merge phase's.
void count_phases(Daemon& d, std::int64_t id, const History& h, std::size_t n, std::int64_t merge_mark,
                  TrialCost& cost) {
  const std::string& good = h.sha_of_id[0];
  const std::string& bad = h.sha_of_id[n];
  std::map<std::int64_t, storage::RequestRow> own;
  for (const auto& r : d.store.all_requests()) {
    if (r.bisection_id == id) {
      own[r.id] = r;
    }
  }
  std::vector<std::string> every(h.sha_of_id.begin(), h.sha_of_id.end());
  for (const auto& r : own) {
    if (!h.id_of_sha.contains(r.second.commit) &&
        std::find(every.begin(), every.end(), r.second.commit) == every.end()) {
      every.push_back(r.second.commit); // the reverted head
    }
  }
  std::set<std::string> variants{""};
  for (const auto& r : own) {
    variants.insert(r.second.variant);
  }
  for (const auto& variant : variants) {
    for (const auto& s : d.store.samples("bench", every, variant).value_or(std::vector<storage::SampleRow>{})) {
      auto r = own.find(s.request_id);
      if (r == own.end()) {
        cost.reused += variant.empty() ? 1 : 0;
        continue;
      }
      if (r->second.purpose == storage::Purpose::verify) {
        ++cost.verification;
        cost.pairs += variant.empty() ? 1 : 0;
      } else if (merge_mark > 0 && r->first > merge_mark) {
        ++cost.merge_phase;
      } else if (s.commit == good || s.commit == bad) {
        ++cost.endpoint;
      } else {
        ++cost.search;
      }
    }
  }
}

} // namespace

TrialCost run_trial(const sim::World& world, const TrialOptions& options) {
  Daemon d(options);
  auto h = make_history(d.trees.repo("sim"), world);
  WorldSampler sampler(world, h);
  test::SimulatedLab lab(
    d.store, [&](const storage::RequestRow& r, int run, const std::string& boot) { return sampler(r, run, boot); });
  seed_alert(d, lab, world, h);
  const auto& sc = world.scenario();
  TrialCost cost;
  auto id = d.driver.start({"sim", "master", h.sha_of_id[0], h.sha_of_id[sc.n], "bench", "", storage::Origin::detect});
  if (!id) {
    return cost;
  }
  std::int64_t merge_mark = 0;
  std::optional<storage::BisectionRow> b;
  for (int tick = 0; tick < options.max_ticks; ++tick) {
    d.driver.advance_all();
    b = d.store.bisection(*id).value_or(std::nullopt);
    if (!b) {
      return cost;
    }
    if (!b->merge.empty() && merge_mark == 0) {
      auto requests = d.store.all_requests();
      merge_mark = requests.empty() ? 0 : requests.back().id;
    }
    if (b->state != storage::BisectionState::running) {
      cost.finished = true;
      break;
    }
    lab.run_queued("local");
  }
  count_phases(d, *id, h, sc.n, merge_mark, cost);
  cost.builds = b ? b->builds : 0;
  cost.boots = b ? b->boots : 0;
  cost.stored_runs = b ? b->runs : 0;
  cost.correct =
    b && b->state == storage::BisectionState::found && world.culprit() && b->culprit == h.sha_of_id[*world.culprit()];
  return cost;
}

} // namespace bisectd::e2e
