// The /proc monitor parsers (monitors/proc_text): each must read what it can from any text, never throw.
#include "fuzz_support.hpp"
#include "monitors/proc_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = bisectd::fuzz::text(data, size);
  for (auto parse : {&bisectd::monitors::parse_vmstat, &bisectd::monitors::parse_meminfo,
                     &bisectd::monitors::parse_interrupts, &bisectd::monitors::parse_softirqs,
                     &bisectd::monitors::parse_stat}) {
    for (const auto& [name, value] : parse(text)) {
      bisectd::fuzz::check(!name.empty(), "counter with an empty name");
      (void)value;
    }
  }
  return 0;
}
