#pragma once
// Bisections, their events and working state (merge, excluded and prebuilt commits), and their reports.

#include "base/error.hpp"
#include "storage/rows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::storage {

class BisectionStore {
public:
  virtual ~BisectionStore() = default;
  virtual Result<std::int64_t> add_bisection(const BisectionRow& bisection) = 0;
  virtual Result<std::optional<BisectionRow>> bisection(std::int64_t id) = 0;
  // Newest first; an empty `tree` or no `state` means all.
  virtual Result<std::vector<BisectionRow>> bisections(const std::string& tree = "",
                                                       std::optional<BisectionState> state = std::nullopt) = 0;
  // Writes the row's columns (range, state, culprit, P, merge, result, verification, counts, error).
  virtual Status update_bisection(const BisectionRow& bisection) = 0;
  // Adds `commit` to the bisection's excluded (verified implausible) or prebuilt set.
  virtual Status exclude_commit(std::int64_t bisection_id, const std::string& commit) = 0;
  virtual Status add_prebuilt(std::int64_t bisection_id, const std::string& commit) = 0;
  // An operator's cancel: the bisection ends `cancelled` and its queued requests fail. Error: not_found, or
  // conflict when it is not running.
  virtual Status cancel_bisection(std::int64_t bisection_id) = 0;
  // The daemon gives up on a running bisection: it ends `failed` with `reason`, and its queued requests fail.
  // Error: not_found, or conflict when it is not running.
  virtual Status fail_bisection(std::int64_t bisection_id, const std::string& reason) = 0;
  // Runs a finished bisection again from its samples: state running, error cleared, and the `infra` flags its
  // failed requests raised are lifted (the lab trouble may be fixed). Error: not_found, or conflict when running.
  virtual Status retry_bisection(std::int64_t bisection_id) = 0;
  // Deletes a finished bisection with its events, marks, requests and report; with `purge` also the samples its
  // requests stored (others measuring the same commits lose them too). Returns how many samples were deleted.
  // Error: not_found, or conflict when it is running.
  virtual Result<std::int64_t> delete_bisection(std::int64_t bisection_id, bool purge) = 0;
  // What the bisection's own requests caused so far, every phase and variant included.
  virtual Result<BisectionCost> bisection_cost(std::int64_t bisection_id) = 0;
  virtual Status add_event(std::int64_t bisection_id, const std::string& message) = 0;
  virtual Result<std::vector<EventRow>> events(std::int64_t bisection_id) = 0;

  // Finishes a bisection and queues its mail in one transaction: a crash never loses or doubles the mail. A
  // report with `repeat_of` set is stored but not queued.
  virtual Status finish_bisection(const BisectionRow& bisection, const std::optional<ReportRow>& report) = 0;
  virtual Result<std::optional<ReportRow>> report(std::int64_t bisection_id) = 0;
  // The first report (not itself a repeat) of another bisection of `tree` and `job` that found `culprit`.
  virtual Result<std::optional<ReportRow>> first_report(const std::string& tree, const std::string& job,
                                                        const std::string& culprit, std::int64_t except_bisection) = 0;
};

} // namespace bisectd::storage
