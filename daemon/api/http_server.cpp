#include "daemon/api/http_server.hpp"

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>

namespace bisectd::daemon::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {
class Session;
} // namespace

// Who holds the server's connection slots. `open` and `anonymous_busy` are also released from pool threads (a
// session whose answer was the last to hold it); the waiting list is touched on the io thread only.
struct ConnectionSlots {
  std::atomic<int> open{0};                         // every connection that has a session and has not been evicted
  std::atomic<int> anonymous_busy{0};               // requests without the token past their head, until answered
  int waiting = 0;                                  // connections still sending their head
  std::deque<std::weak_ptr<Session>> waiting_order; // oldest first; finished entries are dropped lazily

  // Room for one more connection: the oldest ones still sending their head are closed while those exceed their
  // share, or while every slot is taken.
  void make_room(const HttpLimits& limits);
};

namespace {

// One connection: read the header, check it, read the body, hand the request to the pool, write the answer, close.
class Session : public std::enable_shared_from_this<Session> {
public:
  Session(tcp::socket socket, asio::io_context& io, asio::thread_pool& pool, Api& api, const HttpLimits& limits,
          bool loopback, std::shared_ptr<ConnectionSlots> slots)
      : m_stream(std::move(socket)), m_io(io), m_pool(pool), m_api(api), m_limits(limits), m_loopback(loopback),
        m_slots(std::move(slots)) {
    ++m_slots->open;
  }
  ~Session() {
    release_slot();
    if (m_anonymous) {
      --m_slots->anonymous_busy;
    }
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    m_parser.header_limit(static_cast<std::uint32_t>(m_limits.max_header_bytes));
    m_parser.body_limit(m_limits.max_body_bytes);
    // Only a short while to send the head: an idle connection must not hold a slot for the whole request timeout.
    m_stream.expires_after(m_limits.header_timeout);
    m_waiting = true;
    ++m_slots->waiting;
    m_slots->waiting_order.push_back(weak_from_this());
    http::async_read_header(m_stream, m_buffer, m_parser,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  // The answer to a client over the connection cap, without reading its request.
  void refuse() { respond(error_response(503, "too many connections; try again"), 11); }

  [[nodiscard]] bool waiting() const { return m_waiting; }

  // Closes a connection still sending its head, to make room; its slot is free at once.
  void evict() {
    stop_waiting();
    release_slot();
    m_stream.close();
  }

private:
  void stop_waiting() {
    if (m_waiting) {
      m_waiting = false;
      --m_slots->waiting;
    }
  }

  void release_slot() {
    if (!m_released) {
      m_released = true;
      --m_slots->open;
    }
  }

  // A parse error's status. Beast reports a Content-Length over the body limit while it reads the header.
  static int status_for(beast::error_code ec) {
    return ec == http::error::header_limit ? 431 : ec == http::error::body_limit ? 413 : 400;
  }

  // Empty when the request may go on to its body; else the answer it gets.
  std::optional<HttpResponse> check_header() {
    auto& req = m_parser.get();
    if (m_loopback && !is_loopback_host(std::string(req[http::field::host]))) {
      return error_response(421, "this API answers only to Host: localhost or a loopback address");
    }
    if (req.method() != http::verb::get && !m_api.authorized(std::string(req[http::field::authorization])) &&
        !m_api.lava_callback_authorized(std::string(req.target()), std::string(req[http::field::authorization]))) {
      return error_response(401, "a valid token is required for " + std::string(req.method_string()) +
                                   " (Authorization: Bearer ...)");
    }
    return std::nullopt;
  }

  void on_header(beast::error_code ec) {
    stop_waiting();
    if (ec) {
      // Timed out (the stream is closed), evicted, or gone: nobody to answer.
      if (ec != http::error::end_of_stream && ec != beast::error::timeout && ec != asio::error::operation_aborted) {
        respond(error_response(status_for(ec), "bad HTTP request: " + ec.message()), 11);
      }
      return;
    }
    if (auto refused = check_header()) {
      respond(*refused, m_parser.get().version());
      return;
    }
    if (!has_token() && !take_anonymous_slot()) {
      respond(error_response(503, "too many requests without a token; try again"), m_parser.get().version());
      return;
    }
    m_stream.expires_after(m_limits.request_timeout);
    http::async_read(m_stream, m_buffer, m_parser,
                     [self = shared_from_this()](beast::error_code read, std::size_t) { self->on_read(read); });
  }

  [[nodiscard]] bool has_token() {
    auto& req = m_parser.get();
    auto authorization = std::string(req[http::field::authorization]);
    return m_api.authorized(authorization) || m_api.lava_callback_authorized(std::string(req.target()), authorization);
  }

  // Requests without the token share what the reserved slots leave.
  bool take_anonymous_slot() {
    if (++m_slots->anonymous_busy > m_limits.max_connections - m_limits.reserved_for_token) {
      --m_slots->anonymous_busy;
      return false;
    }
    m_anonymous = true;
    return true;
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      respond(error_response(status_for(ec), "bad HTTP request: " + ec.message()), 11);
      return;
    }
    auto& req = m_parser.get();
    HttpRequest request{std::string(req.method_string()), std::string(req.target()), req.body(),
                        std::string(req[http::field::authorization])};
    int version = req.version();
    m_stream.expires_never();
    asio::post(m_pool, [self = shared_from_this(), request = std::move(request), version] {
      auto response = self->m_api.handle(request);
      asio::post(self->m_io, [self, response = std::move(response), version] { self->respond(response, version); });
    });
  }

  void respond(const HttpResponse& response, int version) {
    m_response =
      std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), version);
    m_response->set(http::field::server, "bisectd/" BISECTD_VERSION);
    m_response->set(http::field::content_type, "application/json");
    m_response->keep_alive(false);
    m_response->body() = response.body;
    m_response->prepare_payload();
    m_stream.expires_after(m_limits.request_timeout);
    http::async_write(m_stream, *m_response, [self = shared_from_this()](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream m_stream;
  asio::io_context& m_io;
  asio::thread_pool& m_pool;
  Api& m_api;
  const HttpLimits& m_limits;
  bool m_loopback;
  std::shared_ptr<ConnectionSlots> m_slots;
  bool m_waiting = false;   // still sending its head (io thread only)
  bool m_released = false;  // its slot is given back (evicted, or destroyed)
  bool m_anonymous = false; // holds one of the slots of requests without the token
  beast::flat_buffer m_buffer;
  http::request_parser<http::string_body> m_parser;
  std::shared_ptr<http::response<http::string_body>> m_response;
};

} // namespace

void ConnectionSlots::make_room(const HttpLimits& limits) {
  int waiting_share = limits.max_connections - limits.reserved_for_token;
  while ((waiting >= waiting_share || open >= limits.max_connections) && !waiting_order.empty()) {
    auto oldest = waiting_order.front().lock();
    waiting_order.pop_front();
    if (oldest && oldest->waiting()) {
      oldest->evict();
    }
  }
}

HttpServer::HttpServer(asio::io_context& io, asio::thread_pool& pool, Api& api, HttpLimits limits)
    : m_io(io), m_pool(pool), m_api(api), m_limits(limits), m_acceptor(io), m_backoff_timer(io),
      m_slots(std::make_shared<ConnectionSlots>()) {}

bool is_loopback_host(std::string_view host) {
  std::string name(host);
  if (!name.empty() && name.front() == '[') {
    name = name.substr(1, name.find(']') - 1); // [::1]:8765
  } else if (auto colon = name.rfind(':'); colon != std::string::npos && name.find(':') == colon) {
    name = name.substr(0, colon); // 127.0.0.1:8765, localhost:8765
  }
  if (name == "localhost") {
    return true;
  }
  beast::error_code ec;
  auto address = asio::ip::make_address(name, ec);
  return !ec && address.is_loopback();
}

Status HttpServer::listen(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return make_error(ErrorCode::invalid_config, "listen: '" + address + "' must be HOST:PORT");
  }
  beast::error_code ec;
  auto ip = asio::ip::make_address(address.substr(0, colon), ec);
  int port = -1;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (const std::exception&) {
  }
  if (ec || port < 0 || port > 65535) {
    return make_error(ErrorCode::invalid_config, "listen: '" + address + "' is not a valid HOST:PORT");
  }
  tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
  m_acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    m_acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    m_acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    m_acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return make_error(ErrorCode::unreachable, "listen " + address + ": " + ec.message());
  }
  m_loopback = ip.is_loopback();
  accept();
  return {};
}

unsigned short HttpServer::port() const { return m_acceptor.local_endpoint().port(); }

void HttpServer::stop() {
  beast::error_code ignored;
  m_acceptor.close(ignored);
  m_backoff_timer.cancel();
}

void HttpServer::accept_later() {
  constexpr std::chrono::milliseconds k_first{50}, k_max{2000};
  m_backoff = std::clamp(m_backoff * 2, k_first, k_max);
  m_backoff_timer.expires_after(m_backoff);
  m_backoff_timer.async_wait([this](beast::error_code ec) {
    if (!ec) {
      accept();
    }
  });
}

void HttpServer::accept() {
  m_acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !m_acceptor.is_open()) {
      return;
    }
    if (ec) {
      if (m_backoff.count() == 0) { // once per burst of failures, not once per attempt
        spdlog::warn("http accept: {} (backing off)", ec.message());
      }
      accept_later();
      return;
    }
    m_backoff = std::chrono::milliseconds(0);
    m_slots->make_room(m_limits);
    auto session = std::make_shared<Session>(std::move(socket), m_io, m_pool, m_api, m_limits, m_loopback, m_slots);
    if (m_slots->open.load() > m_limits.max_connections) {
      session->refuse();
    } else {
      session->start();
    }
    accept();
  });
}

} // namespace bisectd::daemon::api
