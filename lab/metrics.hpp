#pragma once
// Parsing benchmark output into metrics: LKP `key: value` lines or one JSON object.

#include "base/error.hpp"
#include "lab/machine.hpp"

#include <map>
#include <string>
#include <string_view>

namespace bisectd::lab {

// The metrics of one output and what the limits left out (counted in lines for LKP, members for JSON).
struct ParsedMetrics {
  std::map<std::string, double> metrics;
  std::size_t dropped_over_cap = 0;
  std::size_t dropped_long_names = 0;
};

// The line a run's log gets when metrics were dropped; empty when none were.
std::string dropped_metrics_note(const ParsedMetrics& parsed, const MetricLimits& limits);

// parse_metrics within `limits`.
ParsedMetrics parse_metrics_capped(std::string_view output, MetricFormat format, const MetricLimits& limits);

// LKP: every line `name: number` (name without spaces) becomes a metric; other lines are ignored.
// JSON: the last top-level JSON object in the output; its numeric members (nested objects flattened
// with '.') become metrics. Non-numeric values are ignored.
std::map<std::string, double> parse_metrics(std::string_view output, MetricFormat format,
                                            const MetricLimits& limits = {});

// Judges one finished benchmark run the same way on every backend: fills `run`'s metrics from `output`, and its
// ok and error. `exit_problem` is how the benchmark ended when that was not a clean exit 0 ("benchmark exit 3",
// "no end marker"), empty otherwise; it is the error when set. A run without the primary metric fails with a
// reason that points at the output ("line 3: 'fast' is not a number", "the output is empty"). Metrics dropped by
// `limits` are said in run.log_note, for the backend to append to the run's log.
void judge_run(RunResult& run, std::string_view output, const RunSpec& spec, std::string exit_problem,
               const MetricLimits& limits = {});

// Adds what was collected around a judged run (monitors, perf) to its metrics within the same `limits`: a guest's
// /proc and perf's call chains come from the tree's kernel, as hostile as the benchmark's output. The run's own
// metrics win a name clash. What is dropped is said in the returned line, also appended to run.log_note.
std::string add_collected_metrics(RunResult& run, std::map<std::string, double> collected,
                                  const MetricLimits& limits = {});

} // namespace bisectd::lab
