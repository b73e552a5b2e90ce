#include "daemon/bisection/prebuilder.hpp"

#include "base/strings.hpp"
#include "bisect/prebuild.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace bisectd::daemon::bisection {

namespace {

// Per round (one set of commits in flight): the two interval midpoints of a one-machine round; more would
// mostly build commits no round picks.
constexpr int k_per_round = 2;

bool is_waiting(const storage::RequestRow& r) { return storage::is_waiting(r.state); }

} // namespace

Prebuilder::~Prebuilder() {
  m_cancel = true;
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

int Prebuilder::on_step(const storage::BisectionRow& b, const std::shared_ptr<const Job>& job,
                        const bisect::Problem& problem, const bisect::Step& step) {
  const int unused = bisect::unused_prebuilds({b.prebuilt.begin(), b.prebuilt.end()}, problem);
  if (step.verdict != bisect::Verdict::need_runs) {
    m_rounds.erase(b.id);
  } else if (may_start(b, problem, step)) {
    Round& round = m_rounds[b.id];
    if (auto sha = next_candidate(*job, problem, unused, round)) {
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
  auto requests = m_queue.requests_for_bisection(b.id);
  return requests && std::none_of(requests->begin(), requests->end(), is_waiting);
}

// The best candidate of the round not tried yet and not in the build store.
std::optional<std::string> Prebuilder::next_candidate(const Job& job, const bisect::Problem& problem, int unused,
                                                      Round& round) {
  if (!round.computed) {
    bisect::Problem budgeted = problem; // prebuilds not measured yet spend the build budget too
    budgeted.settings.max_builds -= unused;
    round.candidates = bisect::prebuild_candidates(budgeted, k_per_round);
    round.computed = true;
  }
  for (std::size_t i : round.candidates) {
    const auto& sha = problem.chain[i].id;
    if (round.tried.contains(sha)) {
      continue;
    }
    if (m_builds.stored(job, sha)) {
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
    std::unique_lock worktree(m_builds.trees().worktree_lock(task.tree), std::try_to_lock);
    if (!worktree.owns_lock()) {
      spdlog::info("{}: not built, the worktree of {} is busy", what, task.tree);
      finish(task, false);
      return;
    }
    auto result = m_builds.in_worktree(*task.job, task.tree, task.commit, "", &m_cancel, true);
    worktree.unlock();
    if (!result) {
      spdlog::warn("{}: {}", what, result.error().message);
    } else if (result->outcome == kbuild::BuildOutcome::ok) {
      built = !result->reused; // a build stored by someone else is not this bisection's
      auto took = result->reused ? std::string("stored already") : fmt::format("built in {:.1f} s", result->seconds);
      spdlog::info("{}: {}", what, took);
      (void)m_bisections.add_event(task.bisection, "prebuild " + base::short_sha(task.commit) + ": " + took);
    } else if (result->outcome == kbuild::BuildOutcome::failed && !result->reused) { // a stored one was counted
      // Exactly what a visit does with a failed build: the failure counts towards skipping the commit (the visit
      // that asks for it builds it again while it is not a verdict yet).
      auto count = m_builds.flag_unbuildable(*task.job, task.commit, "", result->message);
      bool verdict = count && *count >= storage::CommitFlags::k_failures_to_skip;
      auto outcome = verdict ? std::string("skipped") : std::string("to be built again");
      spdlog::warn("{}: build failed, {}: {}", what, outcome, result->message);
      (void)m_bisections.add_event(task.bisection, "prebuild " + base::short_sha(task.commit) + ": build failed, " +
                                                     outcome + ": " + result->message);
    } else {
      spdlog::info("{}: not built: {}", what, result->message);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", what, e.what());
  }
  finish(task, built);
}

void Prebuilder::finish(const Task& task, bool built) {
  if (built) {
    (void)m_bisections.add_prebuilt(task.bisection, task.commit); // a build this bisection spent, across restarts
  }
  {
    std::lock_guard lock(m_mutex);
    m_running.reset();
  }
  if (m_wake && !m_stopping) {
    m_wake();
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
  if (auto job = m_jobs.get(request.job); job && m_builds.stored(**job, request.commit, request.variant)) {
    return; // the visit needs no worktree
  }
  m_cancel = true;
  spdlog::info("prebuild {} for bisection {}: cancelled, the worktree of {} is needed for {}",
               base::short_sha(running->commit), running->bisection, request.tree, base::short_sha(request.commit));
}

} // namespace bisectd::daemon::bisection
