#pragma once
// A test request for a job, as every part that queues one builds it.

#include "daemon/core/job.hpp"
#include "storage/rows.hpp"

#include <string>

namespace bisectd::daemon {

// A queued request to measure `commit` of `tree` with `job` on the job's machine group, `runs` runs in one visit.
storage::RequestRow make_request(const Job& job, const std::string& tree, const std::string& commit,
                                 storage::Purpose purpose, std::int64_t runs);

} // namespace bisectd::daemon
