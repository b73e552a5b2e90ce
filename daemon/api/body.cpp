#include "daemon/api/body.hpp"

namespace bisectd::daemon::api {

namespace {

Error wrong_type(const std::string& key, const std::string& what) {
  return Error{ErrorCode::invalid_input, key + ": must be " + what};
}

} // namespace

Result<std::string> string_field(const nlohmann::json& body, const std::string& key, const std::string& fallback) {
  if (!body.contains(key) || body[key].is_null()) {
    return fallback;
  }
  if (!body[key].is_string()) {
    return std::unexpected(wrong_type(key, "a string"));
  }
  return body[key].get<std::string>();
}

Result<bool> bool_field(const nlohmann::json& body, const std::string& key, bool fallback) {
  if (!body.contains(key) || body[key].is_null()) {
    return fallback;
  }
  if (!body[key].is_boolean()) {
    return std::unexpected(wrong_type(key, "true or false"));
  }
  return body[key].get<bool>();
}

Result<std::int64_t> int_field(const nlohmann::json& body, const std::string& key, std::int64_t fallback) {
  if (!body.contains(key) || body[key].is_null()) {
    return fallback;
  }
  if (!body[key].is_number_integer()) {
    return std::unexpected(wrong_type(key, "an integer"));
  }
  return body[key].get<std::int64_t>();
}

Result<std::vector<std::string>> string_list_field(const nlohmann::json& body, const std::string& key) {
  std::vector<std::string> out;
  if (!body.contains(key) || body[key].is_null()) {
    return out;
  }
  if (!body[key].is_array()) {
    return std::unexpected(wrong_type(key, "a list of strings"));
  }
  for (const auto& item : body[key]) {
    if (!item.is_string()) {
      return std::unexpected(wrong_type(key, "a list of strings"));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

} // namespace bisectd::daemon::api
