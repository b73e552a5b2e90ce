#include "daemon/context.hpp"

#include <nlohmann/json.hpp>

namespace bisectd::daemon {

Result<std::shared_ptr<const Job>> JobCache::get(const std::string& name) {
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

namespace {

std::vector<std::string> strings_of(const nlohmann::json& array) {
  std::vector<std::string> out;
  if (array.is_array()) {
    for (const auto& item : array) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

} // namespace

std::vector<std::string> json_string_list(const std::string& text) {
  return strings_of(nlohmann::json::parse(text, nullptr, false));
}

std::vector<std::string> json_string_list(const nlohmann::json& object, const std::string& key) {
  return object.is_object() && object.contains(key) ? strings_of(object[key]) : std::vector<std::string>{};
}

std::optional<double> metric_value(const storage::SampleRow& sample, const std::string& metric) {
  auto metrics = nlohmann::json::parse(sample.metrics_json, nullptr, false);
  if (metrics.is_discarded() || !metrics.contains(metric) || !metrics[metric].is_number()) {
    return std::nullopt;
  }
  double value = metrics[metric].get<double>();
  if (!(value > 0)) {
    return std::nullopt;
  }
  return value;
}

} // namespace bisectd::daemon
