// The daemon's log format: control characters in a message are escaped (daemon/log_format.cpp).
#include "daemon/log_format.hpp"

#include <catch2/catch.hpp>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <memory>
#include <sstream>
#include <string>

using namespace bisectd;

TEST_CASE("the daemon's log shows a tree's text with its control characters escaped, one record per line",
          "[daemon][log]") {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(daemon::log_formatter(false));
  logger.info("bisection found: {}", "mm: fix\x1b]0;owned\x07\nFAKE [error] line\r");

  auto line = out.str();
  CHECK(line.find("[info] bisection found: mm: fix\\x1b]0;owned\\x07\\x0aFAKE [error] line\\x0d") != std::string::npos);
  CHECK(line.find('\x1b') == std::string::npos);
  CHECK(line.find('\n') == line.size() - 1); // only the record's own end of line
}
