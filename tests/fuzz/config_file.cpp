// bisectd.yaml (daemon/config/config): any text is read over the defaults or gives "file:line: key: what" errors.
#include "daemon/config/config.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bisectd::daemon::config::Config config;
  auto status = bisectd::daemon::config::parse_config(bisectd::fuzz::text(data, size),
                                                      "/nonexistent/fuzz/bisectd.yaml", config);
  if (!status) {
    bisectd::fuzz::check(!status.error().message.empty(), "config error without a message");
  }
  return 0;
}
