// A boot's serial console (lab/console), LAVA's job log and results (lab/lava_log, lab/lava_job) and an ssh box's
// monitored run output (lab/ssh_monitors): text the kernel under test, its benchmark and a remote lab write, so
// anything at all.
#include "fuzz_support.hpp"
#include "lab/console.hpp"
#include "lab/lava_job.hpp"
#include "lab/ssh_monitors.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = bisectd::fuzz::text(data, size);
  auto log = bisectd::lab::parse_console(text);
  (void)bisectd::lab::boot_failure(log, "6.1.0");
  for (const auto& run : log.runs) {
    bisectd::fuzz::check(run.output.size() <= text.size(), "a run's output longer than the console");
  }
  auto console = bisectd::lab::lava_console(text);
  (void)bisectd::lab::parse_console(console);
  (void)bisectd::lab::lava_log_text(text);
  (void)bisectd::lab::lava_error_type(text);
  (void)bisectd::lab::parse_lava_job(text);
  auto run = bisectd::lab::parse_monitored_run(text);
  bisectd::fuzz::check(run.output.size() <= text.size(), "a monitored run's output longer than its stdout");
  auto all = bisectd::monitors::known_monitors();
  for (const auto& [name, value] :
       bisectd::lab::monitored_run_metrics({all.begin(), all.end()}, {true, true}, run, 1.0)) {
    bisectd::fuzz::check(!name.empty() && std::isfinite(value), "a monitor metric unnamed or not finite");
  }
  return 0;
}
