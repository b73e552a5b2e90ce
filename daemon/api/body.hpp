#pragma once
// Typed fields of a request's JSON body: a missing field takes its default, a field of another type is an error
// naming it ("private: must be true or false"), so a client's mistake is a 400 that says what to fix.

#include "base/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bisectd::daemon::api {

Result<std::string> string_field(const nlohmann::json& body, const std::string& key, const std::string& fallback = "");
Result<bool> bool_field(const nlohmann::json& body, const std::string& key, bool fallback);
Result<std::int64_t> int_field(const nlohmann::json& body, const std::string& key, std::int64_t fallback);
Result<std::vector<std::string>> string_list_field(const nlohmann::json& body, const std::string& key);

} // namespace bisectd::daemon::api
