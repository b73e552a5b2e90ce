#include "base/fs.hpp"
#include "lab/machine.hpp"
#include "lab/ssh_host.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <thread>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

// Waits (bounded) until the file holds at least `bytes`.
bool wait_for_size(const std::filesystem::path& path, std::uintmax_t bytes) {
  for (int i = 0; i < 600; ++i) {
    std::error_code ec;
    if (std::filesystem::file_size(path, ec) >= bytes && !ec) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

} // namespace

TEST_CASE("lab::ConsoleCapture keeps at most k_log_limit of a console that never stops talking", "[lab][ssh]") {
  test::TempDir tmp;
  auto log = tmp.path() / "console.log";
  auto host = lab::real_host_commands();
  lab::ConsoleCapture capture(*host, {"yes", "a printk storm"}, log);
  REQUIRE(wait_for_size(log, lab::k_log_limit / 2));
  std::this_thread::sleep_for(200ms); // past the limit: yes writes hundreds of MB/s
  capture.stop();
  auto text = base::read_file(log).value();
  CHECK(text.size() <= lab::k_log_limit + 200);
  CHECK(text.starts_with("a printk storm\n"));
  CHECK(text.find("left out") != std::string::npos);
}

TEST_CASE("lab::ConsoleCapture: reconnections share one limit, then capture stops with a line", "[lab][ssh]") {
  test::TempDir tmp;
  auto log = tmp.path() / "console.log";
  auto host = lab::real_host_commands();
  // Each connection says 3 MB and hangs up; the capture reconnects after a second.
  lab::ConsoleCapture capture(*host, {"head", "-c", "3000000", "/dev/zero"}, log);
  bool full = false;
  for (int i = 0; i < 300 && !full; ++i) {
    std::this_thread::sleep_for(50ms);
    full = base::read_file(log).value_or("").find("console log full") != std::string::npos;
  }
  capture.stop();
  CHECK(full);
  CHECK(std::filesystem::file_size(log) <= lab::k_log_limit + 200);
}
