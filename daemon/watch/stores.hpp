#pragma once
// The stores the watch room reads and writes.

#include "storage/bisection_store.hpp"
#include "storage/detection_store.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"
#include "storage/tree_store.hpp"

namespace bisectd::daemon::watch {

struct WatchStores {
  storage::TreeStore& trees;
  storage::QueueStore& queue;
  storage::SampleStore& samples;
  storage::DetectionStore& detections;
  storage::BisectionStore& bisections;
};

// The job's metric values of `commit` (all its samples), or of the samples of `requests` when given.
Result<std::vector<double>> metric_values(storage::SampleStore& samples, const std::string& job,
                                          const std::string& metric, const std::vector<std::int64_t>& requests,
                                          const std::string& commit);

} // namespace bisectd::daemon::watch
