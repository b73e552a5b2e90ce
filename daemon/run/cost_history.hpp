#pragma once
// What builds, boots and runs of each job have cost lately, so the bisection engine weighs a new build against
// a rerun with this lab's real numbers (a QEMU boot takes seconds, a real box minutes) instead of defaults.

#include "bisect/engine.hpp"

#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace bisectd::daemon::run {

class CostHistory {
public:
  // A fresh (not reused) build of `job` took `seconds`.
  void add_build(const std::string& job, double seconds);
  // A visit of `job`: `boot_seconds` until the benchmark could start, then `runs` runs taking `run_seconds` in all.
  void add_visit(const std::string& job, double boot_seconds, double run_seconds, int runs);
  // The median of the last observations of each kind; bisect::CostModel's defaults where none were seen yet.
  bisect::CostModel model(const std::string& job) const;

private:
  struct Observed {
    std::deque<double> build_s, boot_s, run_s;
  };
  mutable std::mutex m_mutex;
  std::map<std::string, Observed> m_jobs;
};

} // namespace bisectd::daemon::run
