#include "daemon/prebuilder.hpp"

#include "base/strings.hpp"
#include "bisect/prebuild.hpp"
#include "daemon/visit_runner.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace bisectd::daemon {

namespace {

// Per round (one set of commits in flight): the two interval midpoints of a one-machine round; more would
// mostly build commits no round picks.
constexpr int k_per_round = 2;

bool is_waiting(const storage::RequestRow& r) { return r.state == "queued" || r.state == "building"; }

} // namespace

int unused_prebuilds(const std::vector<std::string>& shas, const bisect::Problem& problem) {
  std::set<std::size_t> measured;
  for (const auto& s : problem.samples) {
    measured.insert(s.commit);
  }
  int n = 0;
  for (std::size_t i = 0; i < problem.chain.size(); ++i) {
    const auto& c = problem.chain[i];
    bool prebuilt = std::find(shas.begin(), shas.end(), c.id) != shas.end();
    bool has_samples = measured.contains(i) || (c.same_as && measured.contains(*c.same_as));
    n += prebuilt && !has_samples ? 1 : 0;
  }
  return n;
}

Prebuilder::~Prebuilder() {
  m_cancel = true;
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

int Prebuilder::on_step(storage::BisectionRow& b, const std::shared_ptr<const Job>& job,
                        const bisect::Problem& problem, const bisect::Step& step) {
  auto result = nlohmann::json::parse(b.result_json, nullptr, false);
  if (!result.is_object()) {
    result = nlohmann::json::object();
  }
  auto stored = json_string_list(result, "prebuilt");
  std::set<std::string> shas(stored.begin(), stored.end());
  {
    std::lock_guard lock(m_mutex);
    if (auto found = m_prebuilt.find(b.id); found != m_prebuilt.end()) {
      shas.insert(found->second.begin(), found->second.end());
    }
  }
  if (!shas.empty()) {
    result["prebuilt"] = shas; // kept in the stored result: the count survives a restart
    b.result_json = result.dump();
  }
  std::vector<std::string> list(shas.begin(), shas.end());
  const int unused = unused_prebuilds(list, problem);
  if (step.verdict != bisect::Verdict::need_runs) {
    m_rounds.erase(b.id);
  } else if (may_start(b, problem, step)) {
    Round& round = m_rounds[b.id];
    if (auto sha = next_candidate(b, *job, problem, unused, round)) {
      round.tried.insert(*sha);
      start({b.id, b.tree, *sha, job});
    }
  }
  return unused;
}

// The step waits (no new picks) and no request of the bisection is about to build; nothing else prebuilds.
bool Prebuilder::may_start(const storage::BisectionRow& b, const bisect::Problem& problem, const bisect::Step& step) {
  const auto& in_flight = problem.settings.in_flight;
  for (const auto& pick : step.picks) {
    if (std::find(in_flight.begin(), in_flight.end(), pick.commit) == in_flight.end()) {
      return false; // a new pick: its visit will use the build slot
    }
  }
  Round& round = m_rounds[b.id];
  std::vector<std::size_t> key(in_flight.begin(), in_flight.end());
  std::sort(key.begin(), key.end());
  if (round.in_flight != key) {
    round = Round{};
    round.in_flight = key;
  }
  if (static_cast<int>(round.tried.size()) >= k_per_round || (round.computed && round.candidates.empty())) {
    return false;
  }
  {
    std::lock_guard lock(m_mutex);
    if (m_running) {
      return false;
    }
  }
  auto requests = m_context.store->requests_for_bisection(b.id);
  return requests && std::none_of(requests->begin(), requests->end(), is_waiting);
}

// The best candidate of the round not tried yet and not in the build store.
std::optional<std::string> Prebuilder::next_candidate(const storage::BisectionRow& b, const Job& job,
                                                      const bisect::Problem& problem, int unused, Round& round) {
  if (!round.computed) {
    bisect::Problem budgeted = problem; // prebuilds not measured yet spend the build budget too
    budgeted.settings.max_builds -= unused;
    round.candidates = bisect::prebuild_candidates(budgeted, k_per_round);
    round.computed = true;
  }
  auto hash = recipe_for(job, "").hash();
  if (!hash) {
    spdlog::warn("prebuild for bisection {}: {}", b.id, hash.error().message);
    return std::nullopt;
  }
  for (std::size_t i : round.candidates) {
    const auto& sha = problem.chain[i].id;
    if (round.tried.contains(sha)) {
      continue;
    }
    if (m_context.build_store->lookup(sha, *hash)) {
      round.tried.insert(sha); // stored already (another bisection, an earlier round): nothing to do
      continue;
    }
    return sha;
  }
  return std::nullopt;
}

void Prebuilder::start(Task task) {
  if (m_thread.joinable()) {
    m_thread.join(); // the previous prebuild has finished: m_running was empty
  }
  m_cancel = false;
  {
    std::lock_guard lock(m_mutex);
    m_running = task;
  }
  spdlog::info("prebuild {} for bisection {}: started (a likely pick once the runs in flight land)",
               base::short_sha(task.commit), task.bisection);
  m_thread = std::thread([this, task = std::move(task)] { work(task); });
}

void Prebuilder::work(const Task& task) {
  const auto what = "prebuild " + base::short_sha(task.commit) + " for bisection " + std::to_string(task.bisection);
  bool built = false;
  try {
    std::unique_lock worktree(m_context.trees->worktree_lock(task.tree), std::try_to_lock);
    if (!worktree.owns_lock()) {
      spdlog::info("{}: not built, the worktree of {} is busy", what, task.tree);
      finish(task, false);
      return;
    }
    auto result = build_in_worktree(m_context, *task.job, task.tree, task.commit, "", &m_cancel, true);
    worktree.unlock();
    if (!result) {
      spdlog::warn("{}: {}", what, result.error().message);
    } else if (result->outcome == kbuild::BuildOutcome::ok) {
      built = !result->reused; // a build stored by someone else is not this bisection's
      auto took = result->reused ? std::string("stored already") : fmt::format("built in {:.1f} s", result->seconds);
      spdlog::info("{}: {}", what, took);
      (void)m_context.store->add_event(task.bisection, "prebuild " + base::short_sha(task.commit) + ": " + took);
    } else if (result->outcome == kbuild::BuildOutcome::failed) {
      // Exactly what a visit does with a failed build: the commit is skipped from now on.
      flag_unbuildable(m_context, task.job->name, task.commit, "", result->message);
      spdlog::warn("{}: build failed, marked unbuildable: {}", what, result->message);
      (void)m_context.store->add_event(task.bisection, "prebuild " + base::short_sha(task.commit) +
                                                         ": build failed, skipped: " + result->message);
    } else {
      spdlog::info("{}: not built: {}", what, result->message);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", what, e.what());
  }
  finish(task, built);
}

void Prebuilder::finish(const Task& task, bool built) {
  {
    std::lock_guard lock(m_mutex);
    if (built) {
      m_prebuilt[task.bisection].insert(task.commit);
    }
    m_running.reset();
  }
  if (m_context.wake && !m_context.stopping) {
    m_context.wake();
  }
}

void Prebuilder::on_visit(const storage::RequestRow& request) {
  std::optional<Task> running;
  {
    std::lock_guard lock(m_mutex);
    running = m_running;
  }
  if (!running || running->tree != request.tree || running->commit == request.commit) {
    return; // the same commit: the visit waits for the prebuild and reuses it
  }
  if (auto job = m_context.jobs->get(request.job)) {
    auto hash = recipe_for(**job, request.variant).hash();
    if (hash && m_context.build_store->lookup(request.commit, *hash)) {
      return; // the visit needs no worktree
    }
  }
  m_cancel = true;
  spdlog::info("prebuild {} for bisection {}: cancelled, the worktree of {} is needed for {}",
               base::short_sha(running->commit), running->bisection, request.tree, base::short_sha(request.commit));
}

} // namespace bisectd::daemon
