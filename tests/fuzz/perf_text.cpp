// The perf output parsers (monitors/perf_text): any text gives metrics whose names cannot break a mail (printable
// ASCII, no space, bounded) and whose values are finite; never an exception.
#include "fuzz_support.hpp"
#include "monitors/perf_text.hpp"

#include <cmath>

namespace {

void check_metrics(const std::map<std::string, double>& metrics) {
  for (const auto& [name, value] : metrics) {
    bisectd::fuzz::check(name.size() < 220, "metric name longer than its prefix and a 160-byte symbol");
    for (char c : name) {
      auto byte = static_cast<unsigned char>(c);
      bisectd::fuzz::check(byte > 0x20 && byte < 0x7f, "metric name with a space, control or non-ASCII byte");
    }
    bisectd::fuzz::check(std::isfinite(value), "metric value not finite");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = bisectd::fuzz::text(data, size);
  check_metrics(bisectd::monitors::perf_stat_metrics(text, 2.0));
  check_metrics(bisectd::monitors::perf_stat_metrics(text, 1e-300));
  auto profile = bisectd::monitors::perf_profile_metrics(text);
  check_metrics(profile);
  for (const auto& [name, value] : profile) {
    bisectd::fuzz::check(value > 0, "a profile share that is not positive");
  }
  return 0;
}
