// The /proc monitor parsers (monitors/proc_text): each must read what it can from any text, never throw.
#include "fuzz_support.hpp"
#include "monitors/monitors.hpp"
#include "monitors/proc_text.hpp"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = bisectd::fuzz::text(data, size);
  for (auto parse : {&bisectd::monitors::parse_vmstat, &bisectd::monitors::parse_meminfo,
                     &bisectd::monitors::parse_interrupts, &bisectd::monitors::parse_softirqs,
                     &bisectd::monitors::parse_stat, &bisectd::monitors::parse_pid_stat}) {
    for (const auto& [name, value] : parse(text)) {
      bisectd::fuzz::check(!name.empty(), "counter with an empty name");
      (void)value;
    }
  }
  // The first line against the rest: a shell's stat before and after a run.
  auto line = text.substr(0, text.find('\n'));
  (void)bisectd::monitors::waited_usage(line, text.substr(std::min(text.size(), line.size() + 1)), 1.0);
  return 0;
}
