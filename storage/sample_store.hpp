#pragma once
// Samples (one benchmark run each, shared by everything that measured (job, commit, variant)), commit flags and
// the record of builds.

#include "base/error.hpp"
#include "storage/rows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::storage {

inline constexpr std::size_t k_all_samples = static_cast<std::size_t>(INT64_MAX);

class SampleStore {
public:
  virtual ~SampleStore() = default;
  // Every sample of (job, commit, variant) for each of `commits`, with all metrics, in time order.
  virtual Result<std::vector<SampleRow>> samples(const std::string& job, const std::vector<std::string>& commits,
                                                 const std::string& variant = "") = 0;
  // One metric of the samples of (job, commit, variant) for each of `commits`, in time order; samples without
  // the metric are left out. What the engine reads on every tick: no other metric is decoded.
  virtual Result<std::vector<MetricSample>> metric_samples(const std::string& job,
                                                           const std::vector<std::string>& commits,
                                                           const std::string& metric,
                                                           const std::string& variant = "") = 0;
  // `metric` of the samples stored by each of `requests`.
  virtual Result<std::vector<MetricSample>> request_metric_samples(const std::vector<std::int64_t>& requests,
                                                                   const std::string& metric) = 0;
  // `metrics` of the normal-build samples of (tree, job) measured in `group` by any request, in time order
  // (the watched series).
  virtual Result<std::vector<std::pair<std::string, MetricSample>>>
  series_samples(const std::string& tree, const std::string& job, const std::string& group,
                 const std::vector<std::string>& metrics) = 0;
  // The samples whose commit starts with `prefix` (of `tree` unless empty), in time order: at most `limit` of those
  // with an id above `after_id` (a page of GET /results; 0 and k_all_samples for every one).
  virtual Result<std::vector<SampleRow>> samples_for_commit_prefix(const std::string& prefix, const std::string& tree,
                                                                   std::int64_t after_id, std::size_t limit) = 0;
  virtual Result<std::vector<SampleRow>> samples_for_job(const std::string& job) = 0;

  // Raises `flag` for `key`; returns its new count.
  virtual Result<std::int64_t> add_flag(const FlagKey& key, CommitFlag flag, const std::string& message) = 0;
  // The flags raised for exactly `key` (flags of another definition of the job do not count).
  virtual Result<CommitFlags> flags(const FlagKey& key) = 0;
  // Every flag raised on the commits starting with `prefix`, for any job, definition and variant (`results`).
  virtual Result<std::vector<FlagRow>> commit_flags(const std::string& prefix) = 0;
  // Drops the flags of `key` raised fewer times than make a verdict: the commit was just measured, so an earlier
  // single failure was the machine's or chance's, and must not add up with another one much later.
  virtual Status forget_single_failures(const FlagKey& key) = 0;
  // Drops every flag of `commit` for `job` (any definition and variant); returns how many rows went.
  virtual Result<std::int64_t> clear_flags(const std::string& job, const std::string& commit) = 0;
  virtual Status record_build(const BuildRecord& build) = 0;
  // The newest recorded build of (job, commit, variant), if any.
  virtual Result<std::optional<BuildRecord>> last_build(const std::string& job, const std::string& commit,
                                                        const std::string& variant) = 0;
};

} // namespace bisectd::storage
