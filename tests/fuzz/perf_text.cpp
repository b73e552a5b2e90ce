// The perf output parsers (monitors/perf_text), call chains included: any text gives metrics whose names cannot break
// a mail (printable ASCII, no space, bounded) and whose values are finite; never an exception.
#include "fuzz_support.hpp"
#include "monitors/perf_text.hpp"

#include <cmath>

namespace {

// `max_name`: the prefix and a 160-byte symbol, or 320 bytes of a call chain.
void check_metrics(const std::map<std::string, double>& metrics, std::size_t max_name = 220) {
  for (const auto& [name, value] : metrics) {
    bisectd::fuzz::check(name.size() < max_name, "metric name longer than its prefix and its bound");
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
  auto calltrace = bisectd::monitors::perf_calltrace_metrics(text);
  check_metrics(calltrace, 360);
  bisectd::fuzz::check(calltrace.size() <= 100, "more than 100 call chains");
  for (const auto& [name, value] : calltrace) {
    bisectd::fuzz::check(value >= 0.5 && value <= 100, "a call chain's share outside 0.5..100");
  }
  return 0;
}
