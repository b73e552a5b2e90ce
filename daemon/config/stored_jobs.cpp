#include "daemon/config/stored_jobs.hpp"

#include "daemon/config/job_file.hpp"

namespace bisectd::daemon::config {

Result<std::shared_ptr<const Job>> StoredJobs::get(const std::string& name) {
  BISECTD_TRY_ASSIGN(auto row, m_store.job(name));
  if (!row) {
    return make_error(ErrorCode::not_found, "job '" + name + "' not found");
  }
  std::lock_guard lock(m_mutex);
  auto& slot = m_jobs[name];
  if (slot.second && slot.first == row->yaml) {
    return slot.second;
  }
  BISECTD_TRY_ASSIGN(auto job, parse_job(row->yaml, row->path, m_configs_dir));
  slot = {row->yaml, std::make_shared<const Job>(std::move(job))};
  return slot.second;
}

} // namespace bisectd::daemon::config
