#pragma once
// A job: what to build, where and what to run, which metric matters. Parsed from a job file (configs/jobs/*.yaml)
// by daemon/config/job_file.hpp; every room of the daemon reads it.

#include "bisect/engine.hpp"
#include "kbuild/builder.hpp"
#include "lab/machine.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::daemon {

struct MetricsSpec {
  lab::MetricFormat format = lab::MetricFormat::lkp;
  std::string primary;
  bisect::Direction direction = bisect::Direction::higher_is_better;
  double threshold = 0.02;        // relative
  std::vector<std::string> watch; // further metrics that may open bisections
};

struct BisectSpec {
  bisect::Method method = bisect::Method::bcb;
  double delta = 0.01; // stop at P(culprit) >= 1 - delta
  int max_runs = 400;
  int max_builds = 60;
  std::optional<double> noise; // prior relative run-to-run sigma, when known
};

struct VerifySpec {
  bool confirm = true; // interleaved culprit/parent pairs
  int pairs = 10;
  bool revert = true;                            // revert the culprit on the bad head and measure
  bool layout = true;                            // rebuild culprit and parent with forced alignment
  std::map<std::string, std::string> layout_env; // command recipe: env that plays the role of the alignment option
  bool plausibility = true;                      // never mail a culprit whose build is identical to its parent's
};

struct Job {
  std::string name;
  std::filesystem::path path; // the job file (relative paths inside resolve against its folder)
  std::string yaml;           // the job file's text, shown in reports
  std::string testcase;       // defaults to the name
  kbuild::Recipe build;
  std::string machine_group = "local";
  int runs = 3; // runs per visit
  lab::RunSpec run;
  MetricsSpec metrics;
  std::vector<std::pair<std::string, std::string>> params;
  BisectSpec bisect;
  VerifySpec verify;
};

// The metrics that may open bisections: the primary, then those under metrics.watch (no duplicates).
std::vector<std::string> alerting_metrics(const Job& job);

// The metric families the job's runs collect (lab::collected_families): its monitors, perf-stat, perf-profile.
std::vector<std::string> monitor_families(const Job& job);

} // namespace bisectd::daemon
