// Lab files (daemon/config/config parse_lab) and the backends' settings readers (lab/settings users): any text is
// machine specs or "file:line: machines[i].key: what" errors. Only the pure settings readers run here: creating
// a machine would touch the host (a local machine probes its sandbox).
#include "daemon/config/config.hpp"
#include "fuzz_support.hpp"
#include "lab/lava_job.hpp"
#include "lab/ssh_settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto machines = bisectd::daemon::config::parse_lab(bisectd::fuzz::text(data, size), "/nonexistent/fuzz/lab.yaml");
  if (!machines) {
    bisectd::fuzz::check(!machines.error().message.empty(), "lab error without a message");
    return 0;
  }
  for (const auto& spec : *machines) {
    if (spec.backend == "ssh") {
      (void)bisectd::lab::parse_ssh_settings(spec);
    } else if (spec.backend == "lava") {
      (void)bisectd::lab::parse_lava_settings(spec);
    }
  }
  return 0;
}
