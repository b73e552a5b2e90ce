#pragma once
// The daemon: one io_context drives a periodic tick (poll trees, compare heads, advance bisections, dispatch
// queued requests to idle machines, send mail). Blocking work runs on worker pools and posts back.

#include "daemon/api.hpp"
#include "daemon/bisection_driver.hpp"
#include "daemon/context.hpp"
#include "daemon/http_server.hpp"
#include "daemon/watcher.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <memory>
#include <set>

namespace bisectd::daemon {

class Daemon {
public:
  // Opens the store, creates the machines, binds the listener. Errors are fatal start-up errors.
  static Result<std::unique_ptr<Daemon>> create(Config config);
  ~Daemon();

  // Runs until SIGINT/SIGTERM; returns the process exit code.
  int run();

private:
  explicit Daemon(std::size_t machines);
  Status init(Config config);
  void tick();
  void schedule_tick(std::chrono::milliseconds delay);
  void poll_trees();
  void dispatch();
  void start_visit(std::size_t slot, storage::RequestRow request);
  void send_mail();
  void on_signal(int signal);
  void finish_shutdown();

  boost::asio::io_context m_io;
  boost::asio::thread_pool m_lab_pool; // one thread per machine
  boost::asio::thread_pool m_pool;     // HTTP handlers, fetches, mail
  boost::asio::steady_timer m_timer;
  boost::asio::signal_set m_signals;
  Context m_context;
  std::unique_ptr<BisectionDriver> m_bisections;
  std::unique_ptr<Watcher> m_watcher;
  std::unique_ptr<Api> m_api;
  std::unique_ptr<HttpServer> m_http;
  std::set<std::string> m_fetching;    // trees being fetched
  bool m_mail_busy = false;
  int m_visits = 0;                    // visits running on the lab pool
  bool m_tick_pending = false;
};

} // namespace bisectd::daemon
