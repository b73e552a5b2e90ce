#pragma once
// JSON views of stored rows for the HTTP API (docs/API.md).

#include "storage/rows.hpp"
#include "storage/tree_store.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bisectd::daemon::api {

nlohmann::json null_if_empty(const std::string& text);
// ISO 8601 UTC, or null for 0.
nlohmann::json iso_or_null(std::int64_t unix_time);
nlohmann::json tree_json(const storage::TreeRow& tree, storage::TreeStore& store);
nlohmann::json bisection_summary(const storage::BisectionRow& b, const std::string& culprit_subject);

} // namespace bisectd::daemon::api
