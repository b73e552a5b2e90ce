#include "daemon/core/requests.hpp"

#include "base/hash.hpp"

namespace bisectd::daemon {

storage::RequestRow make_request(const Job& job, const std::string& tree, const std::string& commit,
                                 storage::Purpose purpose, std::int64_t runs) {
  storage::RequestRow r;
  r.tree = tree;
  r.job = job.name;
  r.commit = commit;
  r.purpose = purpose;
  r.machine_group = job.machine_group;
  r.runs = runs;
  return r;
}

std::string job_definition(const Job& job) { return base::hash_hex(job.yaml); }

storage::FlagKey flag_key(const Job& job, const std::string& commit, const std::string& variant) {
  return {job.name, job_definition(job), commit, variant};
}

std::filesystem::path request_log_dir(const std::filesystem::path& data_dir, std::int64_t id) {
  return data_dir / "logs" / ("request-" + std::to_string(id));
}

} // namespace bisectd::daemon
