#include "daemon/api/http_server.hpp"

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

namespace bisectd::daemon::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t k_body_limit = 8 * 1024 * 1024;

// One connection: read a request, hand it to the pool, write the answer, close.
class Session : public std::enable_shared_from_this<Session> {
public:
  Session(tcp::socket socket, asio::io_context& io, asio::thread_pool& pool, Api& api)
    : m_stream(std::move(socket)), m_io(io), m_pool(pool), m_api(api) {}

  void start() {
    m_parser.body_limit(k_body_limit);
    m_stream.expires_after(std::chrono::seconds(30));
    http::async_read(m_stream, m_buffer, m_parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

private:
  void on_read(beast::error_code ec) {
    if (ec) {
      if (ec != http::error::end_of_stream) {
        respond(HttpResponse{400, R"({"error":"bad HTTP request: )" + ec.message() + "\"}"}, 11);
      }
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
    m_response = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status),
                                                                      version);
    m_response->set(http::field::server, "bisectd/" BISECTD_VERSION);
    m_response->set(http::field::content_type, "application/json");
    m_response->keep_alive(false);
    m_response->body() = response.body;
    m_response->prepare_payload();
    m_stream.expires_after(std::chrono::seconds(30));
    http::async_write(m_stream, *m_response, [self = shared_from_this()](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream m_stream;
  asio::io_context& m_io;
  asio::thread_pool& m_pool;
  Api& m_api;
  beast::flat_buffer m_buffer;
  http::request_parser<http::string_body> m_parser;
  std::shared_ptr<http::response<http::string_body>> m_response;
};

} // namespace

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
  accept();
  return {};
}

unsigned short HttpServer::port() const { return m_acceptor.local_endpoint().port(); }

void HttpServer::stop() {
  beast::error_code ignored;
  m_acceptor.close(ignored);
}

void HttpServer::accept() {
  m_acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec != asio::error::operation_aborted) {
        spdlog::warn("http accept: {}", ec.message());
        accept();
      }
      return;
    }
    std::make_shared<Session>(std::move(socket), m_io, m_pool, m_api)->start();
    accept();
  });
}

} // namespace bisectd::daemon::api
