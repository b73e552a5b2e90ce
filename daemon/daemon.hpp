#pragma once
// The daemon: wires the rooms together and drives them. One io_context runs a tick every 500 ms (and on wake-ups)
// whose named steps poll trees, advance the watcher and the bisections, dispatch queued requests to idle
// machines and deliver mail. Blocking work runs on worker pools (HTTP handlers and mail; the watcher's fetches on a
// pool of their own, so that remotes that stall up to fetch_timeout never take the API's threads) and lab threads
// (one per machine), and posts its results back.

#include "base/dir_lock.hpp"
#include "daemon/api/api.hpp"
#include "daemon/api/http_server.hpp"
#include "daemon/bisection/driver.hpp"
#include "daemon/config/config.hpp"
#include "daemon/config/stored_jobs.hpp"
#include "daemon/core/git_trees.hpp"
#include "daemon/mail/outbox.hpp"
#include "daemon/reporting/reporter.hpp"
#include "daemon/run/builds.hpp"
#include "daemon/run/machine_slots.hpp"
#include "daemon/run/placement.hpp"
#include "daemon/run/visit_runner.hpp"
#include "daemon/verify/verifier.hpp"
#include "daemon/watch/watcher.hpp"
#include "kbuild/command_builder.hpp"
#include "kbuild/kernel_builder.hpp"
#include "storage/store.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <set>

namespace bisectd::daemon {

class Daemon {
public:
  // Opens the store, creates the machines, binds the listener. Errors are fatal start-up errors.
  static Result<std::unique_ptr<Daemon>> create(config::Config config);
  ~Daemon();

  // Runs until SIGINT/SIGTERM; returns the process exit code.
  int run();

private:
  explicit Daemon(std::size_t machines);
  Status init(config::Config config);
  void stop_what_the_last_daemon_left();
  Status enable_sandbox();
  Status open_lab();
  void wire_rooms(const std::string& token);
  void tick();
  void schedule_tick(std::chrono::milliseconds delay);
  void wake();
  // The tick's steps, in order.
  void poll_trees();
  void advance_watch();
  void advance_bisections();
  void dispatch();
  void send_mail();

  void start_visit(std::size_t slot, const storage::RequestRow& request);
  void fail_unplaceable();
  void on_signal(int signal);
  void finish_shutdown();

  boost::asio::io_context m_io;
  boost::asio::thread_pool m_lab_pool;   // one thread per machine
  boost::asio::thread_pool m_pool;       // HTTP handlers (`tree add`'s clone too), mail
  boost::asio::thread_pool m_fetch_pool; // the watcher's fetches
  boost::asio::steady_timer m_timer;
  boost::asio::signal_set m_signals;
  config::Config m_config;
  std::optional<base::DirLock> m_data_dir_lock; // held for the daemon's life: one daemon per data dir
  std::atomic<bool> m_stopping{false};
  std::int64_t m_started_at = 0;
  std::string m_unsandboxed_because; // why the trees' code runs without bwrap (`status` says so); empty when it does not

  // The rooms, in construction order (each may use those above it).
  std::unique_ptr<storage::Store> m_store;
  std::unique_ptr<GitTrees> m_repos;
  std::unique_ptr<config::StoredJobs> m_jobs;
  std::unique_ptr<kbuild::BuildStore> m_build_store;
  std::unique_ptr<kbuild::CommandBuilder> m_command_builder;
  std::unique_ptr<kbuild::KernelBuilder> m_kernel_builder;
  run::CostHistory m_costs;
  std::unique_ptr<run::Builds> m_builds;
  std::unique_ptr<run::Quarantine> m_quarantine;
  std::unique_ptr<run::MachineSlots> m_machines;
  std::unique_ptr<run::VisitRunner> m_visits;
  std::unique_ptr<run::PlacementWatch> m_placement;
  std::unique_ptr<watch::SeriesReader> m_series;
  std::unique_ptr<bisection::Priors> m_priors;
  std::unique_ptr<bisection::BuildEquivalence> m_equivalence;
  std::unique_ptr<bisection::Prebuilder> m_prebuilder;
  std::unique_ptr<verify::CulpritVerifier> m_verifier;
  std::unique_ptr<reporting::MailReporter> m_reporter;
  std::unique_ptr<bisection::Driver> m_bisections;
  std::unique_ptr<watch::Confirmation> m_confirmation;
  std::unique_ptr<watch::Watcher> m_watcher;
  std::unique_ptr<mail::Outbox> m_outbox;
  std::unique_ptr<api::Api> m_api;
  std::unique_ptr<api::HttpServer> m_http;

  std::set<std::string> m_fetching; // trees being fetched
  bool m_mail_busy = false;
  int m_running_visits = 0;                // visits running on the lab pool
  std::int64_t m_placement_checked_at = 0; // unix seconds of the last look for requests no machine can take
  bool m_tick_pending = false;
};

} // namespace bisectd::daemon
