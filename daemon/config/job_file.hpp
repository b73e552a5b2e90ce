#pragma once
// Job files (configs/jobs/*.yaml) to Job, with "file:line: key: what" errors.

#include "base/error.hpp"
#include "daemon/core/job.hpp"

#include <filesystem>
#include <string>

namespace bisectd::daemon::config {

// Parses and validates a job. `path` names the file in errors ("job.yaml:12: run.runs: must be >= 1") and anchors
// relative paths (then `configs_dir`). Unknown keys are errors.
Result<Job> parse_job(const std::string& yaml_text, const std::filesystem::path& path,
                      const std::filesystem::path& configs_dir);

} // namespace bisectd::daemon::config
