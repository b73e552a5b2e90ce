#include "daemon/daemon.hpp"

#include "base/clock.hpp"
#include "base/fs.hpp"
#include "base/strings.hpp"
#include "daemon/mail_transport.hpp"
#include "daemon/visit_runner.hpp"

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <csignal>

namespace bisectd::daemon {

namespace asio = boost::asio;

namespace {
constexpr auto k_tick = std::chrono::milliseconds(500);
constexpr std::int64_t k_mail_retry_base_s = 10;
constexpr std::int64_t k_mail_retry_max_s = 3600;
} // namespace

Daemon::Daemon(std::size_t machines)
  : m_lab_pool(std::max<std::size_t>(machines, 1)), m_pool(3), m_timer(m_io), m_signals(m_io, SIGINT, SIGTERM, SIGHUP) {}

Daemon::~Daemon() {
  m_lab_pool.join();
  m_pool.join();
}

Result<std::unique_ptr<Daemon>> Daemon::create(Config config) {
  BISECTD_TRY(finish_config(config));
  std::unique_ptr<Daemon> daemon(new Daemon(config.machines.size()));
  BISECTD_TRY(daemon->init(std::move(config)));
  return daemon;
}

Status Daemon::init(Config config) {
  auto& c = m_context;
  c.config = std::move(config);
  c.started_at = base::unix_now();
  BISECTD_TRY_ASSIGN(c.store, storage::Store::open(c.config.data_dir / "bisectd.db"));
  BISECTD_TRY_ASSIGN(int requeued, c.store->requeue_interrupted());
  if (requeued > 0) {
    spdlog::info("requeued {} request(s) interrupted by the last stop", requeued);
  }
  c.trees = std::make_unique<Trees>(c.config.data_dir);
  c.build_store = std::make_unique<kbuild::BuildStore>(c.config.data_dir / "builds");
  c.jobs = std::make_unique<JobCache>(*c.store, c.config.configs_dir);
  for (const auto& spec : c.config.machines) {
    BISECTD_TRY_ASSIGN(auto machine, lab::make_machine(spec));
    MachineSlot slot;
    slot.machine = std::move(machine);
    c.machines.push_back(std::move(slot));
  }
  c.wake = [this] { asio::post(m_io, [this] { schedule_tick(std::chrono::milliseconds(0)); }); };
  m_bisections = std::make_unique<BisectionDriver>(c);
  m_watcher = std::make_unique<Watcher>(c, *m_bisections);
  BISECTD_TRY_ASSIGN(auto token, base::read_file(c.config.token_file));
  m_api = std::make_unique<Api>(c, *m_bisections, std::string(base::trim(token)));
  m_http = std::make_unique<HttpServer>(m_io, m_pool, *m_api);
  BISECTD_TRY(m_http->listen(c.config.listen));
  return {};
}

int Daemon::run() {
  spdlog::info("bisectd {} listening on http://{}:{} (data dir {}, {} machine(s))", BISECTD_VERSION,
               m_context.config.listen.substr(0, m_context.config.listen.rfind(':')), m_http->port(),
               m_context.config.data_dir.string(), m_context.machines.size());
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
               signal == SIGINT ? "SIGINT" : "SIGTERM", m_visits);
  m_context.stopping = true;
  m_http->stop();
  finish_shutdown();
}

void Daemon::finish_shutdown() {
  if (m_visits == 0 && !m_mail_busy && m_fetching.empty()) {
    m_timer.cancel();
    m_io.stop();
    return;
  }
  m_timer.expires_after(std::chrono::milliseconds(100));
  m_timer.async_wait([this](auto) { finish_shutdown(); });
}

void Daemon::schedule_tick(std::chrono::milliseconds delay) {
  if (m_context.stopping || (m_tick_pending && delay.count() > 0)) {
    return;
  }
  m_tick_pending = true;
  m_timer.expires_after(delay);
  m_timer.async_wait([this](auto ec) {
    m_tick_pending = false;
    if (!ec && !m_context.stopping) {
      tick();
    }
  });
}

void Daemon::tick() {
  try {
    poll_trees();
    m_watcher->advance();
    m_bisections->advance_all();
    dispatch();
    send_mail();
  } catch (const std::exception& e) {
    spdlog::error("scheduler: {}", e.what());
  }
  schedule_tick(k_tick);
}

void Daemon::poll_trees() {
  for (const auto& tree : m_watcher->due_trees(base::unix_now())) {
    if (!m_fetching.insert(tree.name).second) {
      continue;
    }
    asio::post(m_pool, [this, tree] {
      auto heads = m_context.trees->fetch(tree.name);
      asio::post(m_io, [this, tree, heads = std::move(heads)] {
        m_fetching.erase(tree.name);
        if (!heads) {
          spdlog::warn("fetch {}: {}", tree.name, heads.error().message);
          return;
        }
        m_watcher->on_heads(tree, *heads);
      });
    });
  }
}

void Daemon::dispatch() {
  for (std::size_t i = 0; i < m_context.machines.size(); ++i) {
    auto& slot = m_context.machines[i];
    if (slot.busy) {
      continue;
    }
    const auto& spec = slot.machine->spec();
    auto claimed = m_context.store->claim_request(spec.group, spec.name);
    if (!claimed) {
      spdlog::error("queue: {}", claimed.error().message);
      return;
    }
    if (*claimed) {
      start_visit(i, **claimed);
    }
  }
}

void Daemon::start_visit(std::size_t index, storage::RequestRow request) {
  auto& slot = m_context.machines[index];
  {
    std::lock_guard lock(m_context.machines_mutex);
    slot.busy = true;
    slot.current = request.commit;
  }
  ++m_visits;
  m_bisections->prebuilder().on_visit(request); // a speculative build never delays a visit
  spdlog::info("request {}: {} {} x{} on {}", request.id, request.purpose, base::short_sha(request.commit),
               request.runs, slot.machine->spec().name);
  asio::post(m_lab_pool, [this, index, request] {
    try {
      run_request(m_context, m_context.machines[index], request);
    } catch (const std::exception& e) {
      spdlog::error("request {}: {}", request.id, e.what());
      (void)m_context.store->fail_request(request.id, "infra", e.what(), true);
    }
    asio::post(m_io, [this, index] {
      {
        std::lock_guard lock(m_context.machines_mutex);
        m_context.machines[index].busy = false;
        m_context.machines[index].current.clear();
      }
      --m_visits;
      schedule_tick(std::chrono::milliseconds(0));
    });
  });
}

void Daemon::send_mail() {
  if (m_mail_busy) {
    return;
  }
  auto due = m_context.store->due_mail(base::unix_now());
  if (!due || due->empty()) {
    return;
  }
  m_mail_busy = true;
  asio::post(m_pool, [this, due = std::move(*due)] {
    for (const auto& [outbox, report] : due) {
      std::vector<std::string> recipients;
      for (const auto* list : {&report.to_json, &report.cc_json}) {
        for (const auto& r : nlohmann::json::parse(*list, nullptr, false)) {
          recipients.push_back(bare_address(r.get<std::string>()));
        }
      }
      auto sent = deliver(m_context.config.mail, bare_address(report.sender), recipients, report.text);
      if (sent) {
        spdlog::info("mail {} sent to {} recipient(s): {}", report.message_id, recipients.size(), report.subject);
        (void)m_context.store->mark_mail_sent(outbox.id);
      } else {
        // Refused for good (5xx, bad address, bad credentials): retrying cannot help.
        bool permanent = sent.error().code == ErrorCode::invalid_input || sent.error().code == ErrorCode::invalid_config;
        auto delay = std::min(k_mail_retry_max_s, k_mail_retry_base_s << std::min<std::int64_t>(outbox.attempts, 9));
        spdlog::warn("mail {}: {} (attempt {}{})", report.message_id, sent.error().message, outbox.attempts + 1,
                     permanent ? ", not retried" : ", retry in " + std::to_string(delay) + "s");
        (void)m_context.store->mark_mail_failed(outbox.id, sent.error().message, base::unix_now() + delay, permanent);
      }
    }
    asio::post(m_io, [this] { m_mail_busy = false; });
  });
}

} // namespace bisectd::daemon
