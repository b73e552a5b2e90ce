#pragma once
// perf's text around a run, as metrics with LKP's names. Pure: the guest (or host) runs perf, the caller hands
// over what it printed. Like the /proc parsers, each reads what it can and never throws: a garbage line, an
// event perf could not count or a symbol that cannot be a metric name is left out.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace bisectd::monitors {

// `perf stat -x,` output (value,unit,event,run-time,percent[,metric,metric-unit] per line) of one run that
// took `elapsed_seconds`:
//   perf-stat.ps.<event>        count per second of the run (task-clock: msec per second), when elapsed > 0;
//                               the elapsed time is perf's own when its task-clock line says "CPUs utilized"
//                               (task-clock / utilisation), `elapsed_seconds` otherwise
//   perf-stat.overall.ipc, .cpi, .branch-miss-rate%, .dTLB-load-miss-rate%, .iTLB-load-miss-rate%,
//   .cache-miss-rate%           LKP's ratios, when both of their events were counted
// "<not supported>" and "<not counted>" (no PMU, as under QEMU TCG; a multiplexed event never scheduled) give no
// metric: the event is absent, not zero.
std::map<std::string, double> perf_stat_metrics(std::string_view csv, double elapsed_seconds);

// `perf report --stdio --sort sym` output, with `--children` (columns "Children Self Symbol") or without
// (columns "Overhead Symbol", which is self time): the header line says which. Gives
//   perf-profile.children.cycles-pp.<symbol>   percent of samples in the symbol or below it (with --children)
//   perf-profile.self.cycles-pp.<symbol>       percent of samples in the symbol itself
// LKP keeps "cycles-pp" in the name whatever the event (here cpu-clock under TCG). Symbols that are bare
// addresses ("0x...", "[unknown]") name nothing that carries over to another kernel and are left out; two
// symbols that read the same once sanitised add their self shares and keep the larger children share.
std::map<std::string, double> perf_profile_metrics(std::string_view report);

// `perf report --stdio --no-children --sort sym -g folded,0,caller,percent` output: under each symbol's line, its
// call chains, one a line, "<percent of all samples>% <outermost caller>;...;<symbol>". Gives
//   perf-profile.calltrace.cycles-pp.<f>.<its caller>.<that one's caller>...   percent of samples whose chain passes
//                                               through f by that path (f and up to 4 callers, innermost first: LKP's
//                                               names), summed over the chains printed
// for every such path of at least 0.5 % of samples, the 100 largest. Frames that are bare addresses or cannot be a
// metric name (metric_symbol) are skipped; a name is at most 5 frames and 320 bytes of them. perf leaves out chains
// under its --percent-limit, so a row is a lower bound of its path's share.
std::map<std::string, double> perf_calltrace_metrics(std::string_view folded);

// A perf symbol as the tail of a metric name, or nullopt when it must be dropped: empty, longer than 160 bytes,
// with a control character, a byte beyond ASCII (not UTF-8, or UTF-8 that a mail header would need to encode) or
// a bare address. Printable ASCII other than [A-Za-z0-9_.:@$+-] (spaces and parentheses of a C++ signature, '%',
// which would make the row an absolute one, quotes, '<', ...) becomes '_'. The result cannot break a mail's
// layout or headers and is never empty.
std::optional<std::string> metric_symbol(std::string_view symbol);

} // namespace bisectd::monitors
