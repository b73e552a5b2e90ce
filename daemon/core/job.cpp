#include "daemon/core/job.hpp"

#include <algorithm>

namespace bisectd::daemon {

std::vector<std::string> alerting_metrics(const Job& job) {
  std::vector<std::string> out{job.metrics.primary};
  for (const auto& name : job.metrics.watch) {
    if (std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  }
  return out;
}

std::vector<std::string> monitor_families(const Job& job) { return lab::collected_families(job.run); }

} // namespace bisectd::daemon
