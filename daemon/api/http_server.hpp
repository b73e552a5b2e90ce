#pragma once
// The HTTP listener (Boost.Beast) on loopback. Parsing and socket work stay on the io thread; each request's
// handler runs on the worker pool and its response is written back on the io thread.

#include "base/error.hpp"
#include "daemon/api/api.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>

#include <memory>
#include <string>

namespace bisectd::daemon::api {

class HttpServer {
public:
  HttpServer(boost::asio::io_context& io, boost::asio::thread_pool& pool, Api& api)
    : m_io(io), m_pool(pool), m_api(api), m_acceptor(io) {}

  // Binds "HOST:PORT" (port 0 picks a free one) and starts accepting. Errors name the address.
  Status listen(const std::string& address);
  // The bound port (after listen).
  [[nodiscard]] unsigned short port() const;
  void stop();

private:
  void accept();

  boost::asio::io_context& m_io;
  boost::asio::thread_pool& m_pool;
  Api& m_api;
  boost::asio::ip::tcp::acceptor m_acceptor;
};

} // namespace bisectd::daemon::api
