#pragma once
// The durable test queue: requests to measure (job, commit, variant) n times on a machine group.

#include "base/error.hpp"
#include "storage/rows.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::storage {

class QueueStore {
public:
  virtual ~QueueStore() = default;
  virtual Result<std::int64_t> enqueue(const RequestRow& request) = 0;
  // Claims the oldest queued request of `group` that `machine` may take; marks it building on `machine`.
  virtual Result<std::optional<RequestRow>> claim_request(const std::string& group, const std::string& machine) = 0;
  virtual Status set_request_state(std::int64_t id, RequestState state) = 0;
  // Stores the visit's samples and marks the request done, atomically.
  virtual Status finish_request(std::int64_t id, const std::vector<SampleRow>& samples) = 0;
  // Marks the request failed (requeue=false) or back to queued for a retry (requeue=true).
  virtual Status fail_request(std::int64_t id, const std::string& code, const std::string& message,
                              bool requeue) = 0;
  // After a crash: requests left building/running go back to the queue (their partial samples were never stored).
  virtual Result<int> requeue_interrupted() = 0;
  virtual Result<std::vector<RequestRow>> requests_for_bisection(std::int64_t bisection_id) = 0;
  virtual Result<std::vector<RequestRow>> requests_for_detection(std::int64_t detection_id) = 0;
  virtual Result<std::optional<RequestRow>> request(std::int64_t id) = 0;
  // Open (queued, building or running) requests measuring (job, commit) for any purpose.
  virtual Result<std::int64_t> open_requests_for(const std::string& job, const std::string& commit) = 0;
  // Request counts by state name.
  virtual Result<std::map<std::string, std::int64_t>> request_counts() = 0;

  // Commits that finished watch requests of (tree, job, group) measured, newest first, at most `limit`.
  virtual Result<std::vector<std::string>> watched_commits(const std::string& tree, const std::string& job,
                                                           const std::string& group, std::size_t limit) = 0;
  // True when a finished watch request of (tree, job, group) measured `commit`.
  virtual Result<bool> is_watched(const std::string& tree, const std::string& job, const std::string& group,
                                  const std::string& commit) = 0;
};

} // namespace bisectd::storage
