#pragma once
// Shared views over a Problem used by both methods: samples grouped per build (same_as resolved), in log space,
// validation, budget counters and the culprit-vs-parent shift interval.

#include "bisect/engine.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::bisect {

struct LogSample {
  double y;         // log(value)
  std::size_t boot; // index into ChainData::boots (dense)
  std::int64_t seq;
  bool verification;
};

struct ChainData {
  std::size_t size = 0;                         // chain length (good = 0, bad = size - 1)
  std::vector<std::size_t> canonical;           // same_as resolved: the build whose samples a commit uses
  std::vector<std::vector<LogSample>> by_build; // indexed by canonical build; empty for non-canonical entries
  std::vector<std::string> boots;               // distinct boot ids in first-seen order
  int runs = 0;                                 // all samples
  int builds = 0;                               // canonical builds with at least one sample
  std::vector<bool> build_in_flight;            // by canonical build: runs of one of its commits are queued/running

  // Samples that describe commit `i` (those of its canonical build).
  const std::vector<LogSample>& at(std::size_t i) const { return by_build[canonical[i]]; }
  // True when commit `i`'s build has runs queued or running, on `i` or on any commit that builds identically:
  // a run in flight on one of them answers for all, so none of them is picked again meanwhile.
  bool in_flight(std::size_t i) const { return build_in_flight[canonical[i]]; }
};

// Validates `problem` and groups its samples; the error is one line naming the bad field.
std::optional<ChainData> make_chain_data(const Problem& problem, std::string& error);

// True when commit `i` is in `list`.
bool contains(const std::vector<std::size_t>& list, std::size_t i);

// Mean and unbiased variance of the log values (variance 0 for fewer than 2).
struct Moments {
  double n = 0, mean = 0, var = 0;
};
Moments moments(const std::vector<LogSample>& samples);

// Two-sided 95% Student-t quantile for `df` degrees of freedom (df < 1 treated as 1).
double t_quantile_975(double df);

// Relative shift culprit vs parent from their log samples with a Welch 95% interval, oriented as raw
// metric ratio minus 1 (e.g. -0.065 for a 6.5% drop). Returns false when either side has no samples.
bool shift_interval(const std::vector<LogSample>& parent, const std::vector<LogSample>& culprit, Step& step);

// Smallest set of commits, by descending posterior, whose mass reaches `mass`; sorted by index.
std::vector<std::size_t> credible_set(const std::vector<double>& posterior, double mass);

} // namespace bisectd::bisect
