// Benchmark output → metrics (lab/metrics), in both formats a job can ask for: LKP `name: value` lines and JSON.
#include "fuzz_support.hpp"
#include "lab/metrics.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto output = bisectd::fuzz::text(data, size);
  for (auto format : {bisectd::lab::MetricFormat::lkp, bisectd::lab::MetricFormat::json}) {
    for (const auto& [name, value] : bisectd::lab::parse_metrics(output, format)) {
      // A stray line must never become a sample: only finite numbers under a non-empty name.
      bisectd::fuzz::check(!name.empty(), "metric with an empty name");
      bisectd::fuzz::check(std::isfinite(value), "metric value not finite");
    }
  }
  return 0;
}
