#pragma once
// Parsers of the /proc monitor files' text. Each returns what it could read; a garbage line, a value that is
// not an unsigned 64-bit number or a header that does not fit is skipped, never an exception.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace bisectd::monitors {

using Counters = std::map<std::string, std::uint64_t>;

// /proc/vmstat: "name value" lines → {name: value}.
Counters parse_vmstat(std::string_view text);

// /proc/meminfo: "Field:  123 kB" (or without a unit, like HugePages_Total) → {Field: 123}.
Counters parse_meminfo(std::string_view text);

// /proc/interrupts: every source's count summed over the CPUs, under LKP's name: a numbered source as
// "<n>:<rest of the line's words joined by '.'>" (24:PCI-MSI.65536-edge.eth0), a named one as
// "<NAME>:<description with '_' for spaces>" (LOC:Local_timer_interrupts), one without a description (ERR, MIS)
// as its bare label.
Counters parse_interrupts(std::string_view text);

// /proc/softirqs: {NAME: count summed over the CPUs}.
Counters parse_softirqs(std::string_view text);

// /proc/stat: "cpu.user" .. "cpu.steal" (the aggregate cpu line, in clock ticks, as many fields as the kernel
// prints), "intr" (the first number of the intr line: all interrupts) and "ctxt".
Counters parse_stat(std::string_view text);

// /proc/<pid>/stat (one process): "minflt", "cminflt", "majflt", "cmajflt", "utime", "stime", "cutime", "cstime"
// (faults, and times in clock ticks; c* = its waited-for children's). Fields are counted after the last ')', so a
// command name with spaces or parentheses does not shift them; empty when the line is too short or not numbers.
Counters parse_pid_stat(std::string_view text);

} // namespace bisectd::monitors
