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
  // Claims a queued request of `group` that `machine` may take and whose retry time has come, of a tree that was not
  // removed; marks it building on `machine`. Fresh requests go first (fewest attempts, then oldest), so
  // a request that keeps failing never holds up the others.
  virtual Result<std::optional<RequestRow>> claim_request(const std::string& group, const std::string& machine) = 0;
  virtual Status set_request_state(std::int64_t id, RequestState state) = 0;
  // Stores (or clears, with "") the lab's handle of the request's running visit. A queued request with a handle is
  // claimed only by the machine it ran on, before any other request of that machine.
  virtual Status set_lab_handle(std::int64_t id, const std::string& handle) = 0;
  // Adds the wall time of one visit of the request (what the machine was held for, whatever the visit's outcome).
  virtual Status add_machine_time(std::int64_t id, double seconds) = 0;
  // Back to the queue without using an attempt (the lab withdrew the visit); the handle is cleared.
  virtual Status requeue_request(std::int64_t id, const std::string& message) = 0;
  // Stores the visit's samples and marks the request done, atomically.
  virtual Status finish_request(std::int64_t id, const std::vector<SampleRow>& samples) = 0;
  // Marks the request failed (no `retry_at`) or back to queued, to be claimed at `retry_at` (unix time) or later;
  // by any machine but `elsewhere_than` at once when that is not empty (a second attempt after the commit's own
  // failure is evidence from another machine where the group has one).
  virtual Status fail_request(std::int64_t id, const std::string& code, const std::string& message,
                              std::optional<std::int64_t> retry_at, const std::string& elsewhere_than = "") = 0;
  // After a crash: requests left building/running go back to the queue (their partial samples were never stored),
  // unless they were claimed `max_attempts` times already (a request that kills the daemon must not do it for
  // ever): those fail. Returns (requeued, failed).
  virtual Result<std::pair<int, int>> requeue_interrupted(int max_attempts) = 0;
  // How many requests of `purpose` for (job, commit) failed for good.
  virtual Result<std::int64_t> failed_requests_for(const std::string& job, const std::string& commit,
                                                   Purpose purpose) = 0;
  // The newest request of `purpose` for (job, commit) that failed for good; nullopt when none did.
  virtual Result<std::optional<RequestRow>> last_failed_request(const std::string& job, const std::string& commit,
                                                                Purpose purpose) = 0;
  virtual Result<std::vector<RequestRow>> requests_for_bisection(std::int64_t bisection_id) = 0;
  virtual Result<std::vector<RequestRow>> requests_for_detection(std::int64_t detection_id) = 0;
  // Every request waiting for a machine, oldest first.
  virtual Result<std::vector<RequestRow>> queued_requests() = 0;
  // Every open request (queued, building or running), oldest first (`bisectctl queue`).
  virtual Result<std::vector<RequestRow>> open_requests() = 0;
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
