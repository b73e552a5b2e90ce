#pragma once
// The JobCatalog of the daemon: jobs as stored with their trees, parsed once per stored text.

#include "daemon/core/job_catalog.hpp"
#include "storage/tree_store.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

namespace bisectd::daemon::config {

class StoredJobs final : public JobCatalog {
public:
  StoredJobs(storage::TreeStore& store, std::filesystem::path configs_dir)
      : m_store(store), m_configs_dir(std::move(configs_dir)) {}

  Result<std::shared_ptr<const Job>> get(const std::string& name) override;

private:
  storage::TreeStore& m_store;
  std::filesystem::path m_configs_dir;
  std::mutex m_mutex;
  std::map<std::string, std::pair<std::string, std::shared_ptr<const Job>>> m_jobs; // name -> (yaml, job)
};

} // namespace bisectd::daemon::config
