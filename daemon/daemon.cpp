#include "daemon/daemon.hpp"

#include "base/clock.hpp"
#include "base/fs.hpp"
#include "base/hash.hpp"
#include "base/process_tree.hpp"
#include "base/sandbox.hpp"
#include "base/strings.hpp"
#include "daemon/run/retry_policy.hpp"
#include "lab/lava_machine.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <csignal>

namespace bisectd::daemon {

namespace asio = boost::asio;

namespace {

constexpr auto k_tick = std::chrono::milliseconds(500);
constexpr std::size_t k_lava_lab_threads = 8;
// Fetches at once: a tree whose remote stalls holds one for up to fetch_timeout; the others go on.
constexpr std::size_t k_fetch_threads = 2;

// The API's LAVA routes: the notify callback wakes the visit following the job.
api::LavaHooks lava_hooks(const std::vector<lab::MachineSpec>& machines) {
  auto settings = lab::lava_api_settings(machines);
  return api::LavaHooks{settings.callback_secret, [](std::int64_t id) { lab::notify_lava_job(id); },
                        settings.publish_dir};
}

// Every file the configuration names that holds a secret: the config's own (its file, the SMTP password file), the
// lab file and each machine's key, token and secret files (ssh identity_file, LAVA token_file, callback.secret_file).
std::vector<std::filesystem::path> secret_files(const config::Config& config) {
  auto out = config.secret_files;
  if (!config.lab_file.empty()) {
    out.push_back(config.lab_file);
  }
  for (const auto& spec : config.machines) {
    for (const auto& [key, setting] : spec.settings) {
      bool secret = base::ends_with(key, "identity_file") || base::ends_with(key, "token_file") ||
                    base::ends_with(key, "secret_file") || base::ends_with(key, "password_file");
      if (secret && setting.values.size() == 1 && !setting.values.front().empty()) {
        out.push_back(std::filesystem::absolute(setting.values.front()));
      }
    }
  }
  return out;
}

// systemd starts its services with these set: a daemon run there has nobody watching its terminal.
bool under_systemd() {
  return std::getenv("INVOCATION_ID") != nullptr || std::getenv("NOTIFY_SOCKET") != nullptr ||
         std::getenv("JOURNAL_STREAM") != nullptr;
}

} // namespace

Daemon::Daemon(std::size_t machines)
    : m_lab_pool(std::max<std::size_t>(machines, 1)), m_pool(3), m_fetch_pool(k_fetch_threads), m_timer(m_io),
      m_signals(m_io, SIGINT, SIGTERM, SIGHUP) {}

Daemon::~Daemon() {
  m_lab_pool.join();
  m_pool.join();
  m_fetch_pool.join();
}

Result<std::unique_ptr<Daemon>> Daemon::create(config::Config config) {
  BISECTD_TRY(config::finish_config(config));
  // A LAVA machine runs as many visits at once as its device type has idle devices: lab threads for them.
  std::size_t lab_threads = 0;
  for (const auto& spec : config.machines) {
    lab_threads += spec.backend == "lava" ? k_lava_lab_threads : 1;
  }
  std::unique_ptr<Daemon> daemon(new Daemon(lab_threads));
  BISECTD_TRY(daemon->init(std::move(config)));
  return daemon;
}

Status Daemon::open_lab() {
  std::vector<std::unique_ptr<lab::Machine>> machines;
  for (const auto& spec : m_config.machines) {
    auto machine = lab::make_machine(spec);
    if (!machine && spec.backend == "lava") { // a remote lab that is down or refuses us: the rest of the lab runs
      spdlog::error("{} (machine left out until a restart)", machine.error().message);
      continue;
    }
    BISECTD_TRY(machine);
    machines.push_back(std::move(*machine));
  }
  m_machines = std::make_unique<run::MachineSlots>(std::move(machines));
  m_quarantine = std::make_unique<run::Quarantine>(m_store.get());
  BISECTD_TRY(m_quarantine->load());
  m_machines->set_quarantine(m_quarantine.get());
  return {};
}

void Daemon::wake() {
  asio::post(m_io, [this] { schedule_tick(std::chrono::milliseconds(0)); });
}

// Each room gets the collaborators it needs, nothing more.
void Daemon::wire_rooms(const std::string& token) {
  auto& store = *m_store;
  Wake wake = [this] { this->wake(); };
  m_visits =
    std::make_unique<run::VisitRunner>(store, store, *m_jobs, *m_builds, m_costs, m_config.data_dir, m_stopping, wake);
  m_visits->set_quarantine(m_quarantine.get());
  m_placement = std::make_unique<run::PlacementWatch>(m_config.placement_timeout);
  m_series = std::make_unique<watch::SeriesReader>(*m_repos, store, store);
  m_priors = std::make_unique<bisection::Priors>(*m_series, store, m_costs, *m_builds, *m_repos);
  m_equivalence = std::make_unique<bisection::BuildEquivalence>(*m_build_store, store);
  m_prebuilder = std::make_unique<bisection::Prebuilder>(*m_builds, *m_jobs, store, store, wake, m_stopping);
  m_verifier = std::make_unique<verify::CulpritVerifier>(verify::VerifyDeps{store, store, store, *m_repos, *m_builds});
  m_reporter = std::make_unique<reporting::MailReporter>(
    store, *m_repos, *m_machines,
    reporting::MailIdentity{m_config.mail_from, m_config.reported_by, m_config.archive_url, m_config.max_recipients});
  // get_maintainer.pl and the compiler probe take up to a minute: not on this (the I/O) thread.
  m_reporter->offload_additions([this](std::function<void()> work) { asio::post(m_pool, std::move(work)); }, wake);
  m_bisections = std::make_unique<bisection::Driver>(bisection::DriverStores{store, store, store, store},
                                                     bisection::DriverParts{*m_repos, *m_jobs, *m_machines, *m_priors,
                                                                            *m_equivalence, m_prebuilder.get(),
                                                                            *m_verifier, *m_reporter},
                                                     wake);
  watch::WatchStores watch_stores{store, store, store, store, store};
  m_confirmation = std::make_unique<watch::Confirmation>(watch_stores, *m_series, *m_jobs, *m_machines, *m_bisections,
                                                         m_config.confirm_runs);
  m_watcher = std::make_unique<watch::Watcher>(watch_stores, *m_repos, *m_series, *m_jobs, *m_confirmation,
                                               m_config.poll_interval);
  m_outbox = std::make_unique<mail::Outbox>(store, m_config.mail);
  m_outbox->recover_interrupted();
  api::ApiContext api_context{.trees = store,
                              .queue = store,
                              .samples = store,
                              .bisections = store,
                              .detections = store,
                              .outbox = store,
                              .repos = *m_repos,
                              .jobs = *m_jobs,
                              .lab = *m_machines,
                              .starter = *m_bisections,
                              .wake = wake,
                              .configs_dir = m_config.configs_dir,
                              .poll_interval = m_config.poll_interval,
                              .data_dir = m_config.data_dir,
                              .started_at = m_started_at,
                              .public_reads = m_config.public_reads,
                              .unsandboxed_because = m_unsandboxed_because,
                              .release_machine = {}};
  api_context.release_machine = [this, wake](const std::string& name) -> Result<bool> {
    if (m_machines->slot_of(name) < 0) {
      return make_error(ErrorCode::not_found, "no machine named '" + name + "'");
    }
    auto released = m_quarantine->release(name);
    if (released && *released) {
      wake();
    }
    return released;
  };
  api_context.check_machine = [this](const std::string& name,
                                     const lab::CheckOptions& options) -> Result<std::vector<lab::CheckLine>> {
    int slot = m_machines->slot_of(name);
    if (slot < 0) {
      std::vector<std::string> names;
      for (const auto& m : m_machines->machines()) {
        names.push_back(m.name);
      }
      return make_error(ErrorCode::not_found,
                        "no machine named '" + name + "' (the lab has: " + base::join(names, ", ") + ")");
    }
    return m_machines->machine(static_cast<std::size_t>(slot)).check(options);
  };
  api_context.lava = lava_hooks(m_config.machines);
  m_api = std::make_unique<api::Api>(std::move(api_context), token);
  m_http = std::make_unique<api::HttpServer>(m_io, m_pool, *m_api);
}

// Builds, benchmarks and QEMUs a killed daemon on this data dir started are still running (they would race the
// same build in the same worktree): they carry its mark (base/process_tree.hpp) and go before anything starts.
void Daemon::stop_what_the_last_daemon_left() {
  auto owner = base::hash_hex(std::filesystem::absolute(m_config.data_dir).lexically_normal().string()).substr(0, 16);
  base::set_process_owner(owner);
  auto killed = base::kill_orphans_of_owner(owner);
  if (!killed.empty()) {
    spdlog::warn("stopped {} process(es) the previous bisectd on this data dir left running (pid {}{})", killed.size(),
                 killed.front(), killed.size() > 1 ? ", ..." : "");
  }
}

// The tree's code (builds, `local` benchmarks, get_maintainer.pl) runs without the daemon's files in sight.
Status Daemon::enable_sandbox() {
  if (m_config.sandbox == "none") {
    spdlog::warn("sandbox: none: the trees' builds and benchmarks can read this data dir, its token and the network");
    m_unsandboxed_because = "sandbox: none in the configuration";
    return {};
  }
  base::SandboxPolicy policy{.enabled = true, .bwrap = "bwrap", .hidden = {m_config.data_dir}};
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    policy.hidden.emplace_back(home);
  }
  policy.hidden.push_back(m_config.token_file.parent_path());
  for (auto& file : secret_files(m_config)) {
    policy.hidden.push_back(std::move(file));
  }
  if (auto why = base::sandbox_unusable(policy.bwrap); !why.empty()) {
    if (m_config.sandbox == "bwrap") {
      return make_error(ErrorCode::invalid_config, "sandbox: bwrap cannot start a sandbox here: " + why);
    }
    if (under_systemd()) { // nobody would see a fallback there: `auto` never drops the sandbox silently
      return make_error(ErrorCode::invalid_config,
                        "sandbox: auto: bwrap cannot start a sandbox here (" + why +
                          "); under systemd bisectd does not run the trees' code unsandboxed: make bwrap work "
                          "(user namespaces, the unit's RestrictNamespaces=) or set `sandbox: none`");
    }
    spdlog::error("sandbox: auto: bwrap cannot start a sandbox here ({}): the trees' builds and benchmarks run "
                  "UNSANDBOXED (set `sandbox: none` to say that is meant, or `sandbox: bwrap` to refuse)",
                  why);
    m_unsandboxed_because = "sandbox: auto, and bwrap cannot start a sandbox here (" + why + ")";
    return {};
  }
  base::set_sandbox_policy(std::move(policy));
  spdlog::info("sandbox: builds, local benchmarks and get_maintainer.pl run under bwrap");
  return {};
}

Status Daemon::init(config::Config config) {
  m_config = std::move(config);
  m_started_at = base::unix_now();
  BISECTD_TRY_ASSIGN(m_data_dir_lock, base::DirLock::acquire(m_config.data_dir));
  stop_what_the_last_daemon_left();
  BISECTD_TRY(enable_sandbox());
  BISECTD_TRY_ASSIGN(m_store, storage::Store::open(m_config.data_dir / "bisectd.db"));
  BISECTD_TRY_ASSIGN(auto interrupted, m_store->requeue_interrupted(run::k_max_interrupted_attempts));
  if (interrupted.first > 0 || interrupted.second > 0) {
    spdlog::info("requests interrupted by the last stop: {} queued again, {} failed (interrupted {} times)",
                 interrupted.first, interrupted.second, run::k_max_interrupted_attempts);
  }
  m_repos = std::make_unique<GitTrees>(m_config.data_dir, vcs::TransferLimits{m_config.fetch_timeout, &m_stopping});
  m_jobs = std::make_unique<config::StoredJobs>(*m_store, m_config.configs_dir);
  m_build_store = std::make_unique<kbuild::BuildStore>(m_config.data_dir / "builds");
  m_command_builder = std::make_unique<kbuild::CommandBuilder>(*m_build_store);
  m_kernel_builder = std::make_unique<kbuild::KernelBuilder>(*m_build_store, m_config.cache_dir / "kbuild");
  m_builds = std::make_unique<run::Builds>(*m_repos, *m_build_store, *m_store, m_costs,
                                           run::Builders{*m_command_builder, *m_kernel_builder});
  BISECTD_TRY(open_lab());
  BISECTD_TRY_ASSIGN(auto token, base::read_file(m_config.token_file));
  wire_rooms(std::string(base::trim(token)));
  BISECTD_TRY(m_http->listen(m_config.listen));
  return {};
}

int Daemon::run() {
  spdlog::info("bisectd {} listening on http://{}:{} (data dir {}, {} machine(s))", BISECTD_VERSION,
               m_config.listen.substr(0, m_config.listen.rfind(':')), m_http->port(), m_config.data_dir.string(),
               m_machines->size());
  m_signals.async_wait([this](auto ec, int signal) {
    if (!ec) {
      on_signal(signal);
    }
  });
  schedule_tick(std::chrono::milliseconds(0));
  m_io.run();
  spdlog::info("bisectd stopped");
  return 0;
}

void Daemon::on_signal(int signal) {
  if (signal == SIGHUP) {
    spdlog::info("SIGHUP: configuration is read at start-up; restart bisectd to apply changes");
    m_signals.async_wait([this](auto ec, int next) {
      if (!ec) {
        on_signal(next);
      }
    });
    return;
  }
  spdlog::info("{}: stopping (cancelling {} running visit(s); they go back to the queue)",
               signal == SIGINT ? "SIGINT" : "SIGTERM", m_running_visits);
  m_stopping = true;
  m_http->stop();
  finish_shutdown();
}

void Daemon::finish_shutdown() {
  if (m_running_visits == 0 && !m_mail_busy && m_fetching.empty()) {
    m_timer.cancel();
    m_io.stop();
    return;
  }
  m_timer.expires_after(std::chrono::milliseconds(100));
  m_timer.async_wait([this](auto) { finish_shutdown(); });
}

void Daemon::schedule_tick(std::chrono::milliseconds delay) {
  if (m_stopping || (m_tick_pending && delay.count() > 0)) {
    return;
  }
  m_tick_pending = true;
  m_timer.expires_after(delay);
  m_timer.async_wait([this](auto ec) {
    m_tick_pending = false;
    if (!ec && !m_stopping) {
      tick();
    }
  });
}

void Daemon::tick() {
  struct Step {
    const char* name;
    void (Daemon::*run)();
  };
  static constexpr std::array k_steps{
    Step{"poll trees", &Daemon::poll_trees},      // fetch due trees on the pool; record new heads
    Step{"watch", &Daemon::advance_watch},        // measure heads, compare, confirm, open bisections
    Step{"bisect", &Daemon::advance_bisections},  // recompute each bisection's step, queue its picks or finish
    Step{"dispatch", &Daemon::dispatch},          // hand queued requests to idle machines
    Step{"placement", &Daemon::fail_unplaceable}, // give up on requests no machine can take, naming why
    Step{"mail", &Daemon::send_mail},             // deliver due mail on the pool
  };
  for (const auto& step : k_steps) {
    try {
      (this->*step.run)();
    } catch (const std::exception& e) {
      spdlog::error("scheduler: {}: {}", step.name, e.what());
    }
  }
  schedule_tick(k_tick);
}

void Daemon::poll_trees() {
  for (const auto& tree : m_watcher->due_trees(base::unix_now())) {
    if (!m_fetching.insert(tree.name).second) {
      continue;
    }
    asio::post(m_fetch_pool, [this, tree] {
      auto heads = m_repos->fetch(tree.name);
      asio::post(m_io, [this, tree, heads = std::move(heads)] {
        m_fetching.erase(tree.name);
        if (!heads) {
          if (heads.error().code != ErrorCode::cancelled) {
            m_watcher->on_fetch_failed(tree, heads.error().message);
          }
          return;
        }
        m_watcher->on_heads(tree, *heads);
      });
    });
  }
}

void Daemon::advance_watch() { m_watcher->advance(); }

void Daemon::advance_bisections() { m_bisections->advance_all(); }

void Daemon::dispatch() {
  for (std::size_t i = 0; i < m_machines->size(); ++i) {
    if (m_machines->busy(i) || m_machines->quarantined(i)) {
      continue;
    }
    const auto& spec = m_machines->machine(i).spec();
    auto claimed = m_store->claim_request(spec.group, spec.name);
    if (!claimed) {
      spdlog::error("queue: {}", claimed.error().message);
      return;
    }
    if (*claimed) {
      start_visit(i, **claimed);
    }
  }
}

void Daemon::fail_unplaceable() {
  auto now = base::unix_now();
  if (now - m_placement_checked_at < 10) {
    return; // a queue scan every tick (twice a second) would be waste: the timeout is minutes
  }
  m_placement_checked_at = now;
  auto queued = m_store->queued_requests();
  if (!queued) {
    spdlog::error("queue: {}", queued.error().message);
    return;
  }
  for (const auto& [request, reason] : m_placement->due(*queued, m_machines->machines(), now)) {
    spdlog::warn("request {} ({} {}): {}: giving up", request.id, to_string(request.purpose),
                 base::short_sha(request.commit), reason);
    if (auto failed = m_store->fail_request(request.id, "unplaceable", reason, std::nullopt); !failed) {
      spdlog::error("request {}: {}", request.id, failed.error().message);
      continue;
    }
    if (request.bisection_id != 0) {
      auto why = "request " + std::to_string(request.id) + " (" + base::short_sha(request.commit) +
                 ") could not be placed: " + reason;
      if (auto ended = m_store->fail_bisection(request.bisection_id, why); ended) {
        (void)m_store->add_event(request.bisection_id, "failed: " + why);
      }
    }
  }
}

void Daemon::start_visit(std::size_t slot, const storage::RequestRow& request) {
  m_machines->set_busy(slot, true, request.commit);
  ++m_running_visits;
  m_prebuilder->on_visit(request); // a speculative build never delays a visit
  spdlog::info("request {}: {} {} x{} on {}", request.id, to_string(request.purpose), base::short_sha(request.commit),
               request.runs, m_machines->machine(slot).spec().name);
  asio::post(m_lab_pool, [this, slot, request] {
    m_visits->run(m_machines->machine(slot), request); // never throws: failures are stored, bounded
    asio::post(m_io, [this, slot] {
      m_machines->set_busy(slot, false);
      --m_running_visits;
      schedule_tick(std::chrono::milliseconds(0));
    });
  });
}

void Daemon::send_mail() {
  if (m_mail_busy) {
    return;
  }
  m_mail_busy = true;
  asio::post(m_pool, [this] {
    m_outbox->deliver_due(base::unix_now());
    asio::post(m_io, [this] { m_mail_busy = false; });
  });
}

} // namespace bisectd::daemon
