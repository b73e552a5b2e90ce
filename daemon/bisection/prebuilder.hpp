#pragma once
// Prebuilds: while a bisection's BCB round waits for its runs in flight, the tree's build slot idles. The
// prebuilder builds the commits the next round will likely pick (bisect::prebuild_candidates) in the background
// into the build store, so the later visit finds the build and reuses it. One prebuild at a time in the whole
// daemon, only when the tree's worktree is free; a visit that needs the worktree for another commit cancels it.
//
// Threads: on_step() and on_visit() run on the io thread; the build runs on the prebuilder's own thread.

#include "bisect/engine.hpp"
#include "daemon/core/job_catalog.hpp"
#include "daemon/core/wake.hpp"
#include "daemon/run/builds.hpp"
#include "storage/bisection_store.hpp"
#include "storage/queue_store.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace bisectd::daemon::bisection {

class Prebuilder {
public:
  // `stopping`: no wake-ups once the daemon stops.
  Prebuilder(run::Builds& builds, JobCatalog& jobs, storage::QueueStore& queue, storage::BisectionStore& bisections,
             Wake wake, const std::atomic<bool>& stopping)
      : m_builds(builds), m_jobs(jobs), m_queue(queue), m_bisections(bisections), m_wake(std::move(wake)),
        m_stopping(stopping) {}
  ~Prebuilder(); // cancels a running prebuild and waits for its thread
  Prebuilder(const Prebuilder&) = delete;
  Prebuilder& operator=(const Prebuilder&) = delete;

  // Called by the bisection driver after each step of `b` (io thread): when the step waits on runs in flight
  // (no new picks, no request of the bisection queued or building) starts the likeliest next candidate's build.
  // A finished prebuild is stored in the bisection's prebuilt set. Returns how many prebuilt commits of
  // `problem`'s chain have no samples yet: builds spent that the engine's builds_used (builds with samples) does
  // not count.
  int on_step(const storage::BisectionRow& b, const std::shared_ptr<const Job>& job, const bisect::Problem& problem,
              const bisect::Step& step);

  // Called when a visit of `request` starts (io thread): a prebuild of another commit in the same tree is
  // cancelled unless the visit's build is stored already, so the visit never waits for a speculative build.
  void on_visit(const storage::RequestRow& request);

private:
  struct Task {
    std::int64_t bisection = 0;
    std::string tree, commit;
    std::shared_ptr<const Job> job;
  };
  struct Round { // what one bisection did while one set of commits was in flight
    std::vector<std::size_t> in_flight;
    std::vector<std::size_t> candidates; // computed once per round (the posterior is fixed until runs land)
    std::set<std::string> tried;
    bool computed = false;
  };

  bool may_start(const storage::BisectionRow& b, const bisect::Problem& problem, const bisect::Step& step);
  std::optional<std::string> next_candidate(const Job& job, const bisect::Problem& problem, int unused, Round& round);
  void start(Task task);
  void work(const Task& task); // prebuilder thread
  void finish(const Task& task, bool built);

  run::Builds& m_builds;
  JobCatalog& m_jobs;
  storage::QueueStore& m_queue;
  storage::BisectionStore& m_bisections;
  Wake m_wake;
  const std::atomic<bool>& m_stopping;
  std::map<std::int64_t, Round> m_rounds; // io thread only
  std::mutex m_mutex;                     // guards m_running
  std::optional<Task> m_running;
  std::atomic<bool> m_cancel{false};
  std::thread m_thread;
};

} // namespace bisectd::daemon::bisection
