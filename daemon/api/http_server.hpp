#pragma once
// The HTTP listener (Boost.Beast). Parsing and socket work stay on the io thread; each request's handler runs on
// the worker pool and its response is written back on the io thread. Limits hold whatever a client sends: a cap
// on open connections with slots kept for the token's holder, a short deadline for the request head (the oldest
// connection still sending one is closed first when the slots run out), header and body sizes checked (and the
// token of a write) before a body is read, a deadline per request, a backoff when accept fails (descriptors
// exhausted), and — on a loopback bind — a Host check, so a web page cannot reach the API through DNS rebinding.

#include "base/error.hpp"
#include "daemon/api/api.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace bisectd::daemon::api {

struct HttpLimits {
  int max_connections = 64; // more are answered 503 and closed (once no idle connection can make room)
  // Slots only a request carrying the token may take: connections still sending their head and requests without
  // the token share the rest, so idle or anonymous clients cannot lock the operator out.
  int reserved_for_token = 16;
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_body_bytes = 1024 * 1024; // a job file with its tree: far below
  std::chrono::seconds header_timeout{5};   // from accept to a complete request head; then the connection is closed
  std::chrono::seconds request_timeout{30}; // reading the body, and writing the answer
};

// The connections of one server (defined in http_server.cpp).
struct ConnectionSlots;

class HttpServer {
public:
  HttpServer(boost::asio::io_context& io, boost::asio::thread_pool& pool, Api& api, HttpLimits limits = {});

  // Binds "HOST:PORT" (port 0 picks a free one) and starts accepting. Errors name the address.
  Status listen(const std::string& address);
  // The bound port (after listen).
  [[nodiscard]] unsigned short port() const;
  void stop();

private:
  void accept();
  void accept_later(); // after a failed accept: back off, so a full descriptor table cannot make it spin

  boost::asio::io_context& m_io;
  boost::asio::thread_pool& m_pool;
  Api& m_api;
  HttpLimits m_limits;
  boost::asio::ip::tcp::acceptor m_acceptor;
  boost::asio::steady_timer m_backoff_timer;
  std::chrono::milliseconds m_backoff{0};
  bool m_loopback = false;
  std::shared_ptr<ConnectionSlots> m_slots;
};

// True when `host` (a Host header: name or address, optional port) names this machine's loopback.
bool is_loopback_host(std::string_view host);

} // namespace bisectd::daemon::api
