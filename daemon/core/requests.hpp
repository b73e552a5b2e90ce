#pragma once
// A test request for a job, as every part that queues one builds it.

#include "daemon/core/job.hpp"
#include "storage/rows.hpp"

#include <filesystem>
#include <string>

namespace bisectd::daemon {

// A queued request to measure `commit` of `tree` with `job` on the job's machine group, `runs` runs in one visit.
storage::RequestRow make_request(const Job& job, const std::string& tree, const std::string& commit,
                                 storage::Purpose purpose, std::int64_t runs);

// The job's definition as commit flags name it: a hash of its stored text, so a job changed under the same name
// (`tree set --job`) starts with no flags.
std::string job_definition(const Job& job);
// Whom `commit`'s flags for `job` (its build `variant`) speak of.
storage::FlagKey flag_key(const Job& job, const std::string& commit, const std::string& variant = "");

// Where the visit of request `id` keeps its run logs and console logs: DATA_DIR/logs/request-ID.
std::filesystem::path request_log_dir(const std::filesystem::path& data_dir, std::int64_t id);

} // namespace bisectd::daemon
