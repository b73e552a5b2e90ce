#pragma once
// JSON views of stored rows for the HTTP API (docs/API.md).

#include "storage/store.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace bisectd::daemon {

std::string url_decode(std::string_view text);
nlohmann::json tree_json(const storage::TreeRow& tree, storage::Store& store);
nlohmann::json bisection_summary(const storage::BisectionRow& b, const std::string& culprit_subject);

} // namespace bisectd::daemon
