#include "daemon/run/cost_history.hpp"

#include "bisect/stats.hpp"

#include <algorithm>
#include <vector>

namespace bisectd::daemon::run {

namespace {

constexpr std::size_t k_kept = 20; // recent enough to follow a changed lab, enough for a stable median

void remember(std::deque<double>& values, double value) {
  values.push_back(value);
  if (values.size() > k_kept) {
    values.pop_front();
  }
}

double median_or(const std::deque<double>& values, double fallback) {
  if (values.empty()) {
    return fallback;
  }
  std::vector<double> copy(values.begin(), values.end());
  return bisect::median(copy);
}

} // namespace

void CostHistory::add_build(const std::string& job, double seconds) {
  std::lock_guard lock(m_mutex);
  remember(m_jobs[job].build_s, std::max(0.0, seconds));
}

void CostHistory::add_visit(const std::string& job, double boot_seconds, double run_seconds, int runs) {
  if (runs <= 0) {
    return;
  }
  std::lock_guard lock(m_mutex);
  auto& observed = m_jobs[job];
  remember(observed.boot_s, std::max(0.0, boot_seconds));
  remember(observed.run_s, std::max(0.0, run_seconds) / runs);
}

bisect::CostModel CostHistory::model(const std::string& job) const {
  bisect::CostModel defaults;
  std::lock_guard lock(m_mutex);
  auto found = m_jobs.find(job);
  if (found == m_jobs.end()) {
    return defaults;
  }
  const auto& o = found->second;
  // A zero cost would make the engine treat that step as free; a second is the floor of what we can time.
  return bisect::CostModel{std::max(1.0, median_or(o.build_s, defaults.build_s)),
                           std::max(1.0, median_or(o.boot_s, defaults.boot_s)),
                           std::max(1.0, median_or(o.run_s, defaults.run_s))};
}

} // namespace bisectd::daemon::run
