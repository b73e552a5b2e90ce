#include "lab/settings.hpp"

#include "base/strings.hpp"
#include "base/units.hpp"

#include <algorithm>

namespace bisectd::lab {

namespace fs = std::filesystem;

Setting scalar_setting(std::string value) { return Setting{{std::move(value)}, false, ""}; }

Setting list_setting(std::vector<std::string> values) { return Setting{std::move(values), true, ""}; }

std::string SettingsReader::where(const std::string& key) const {
  auto found = m_settings.find(key);
  if (found != m_settings.end() && !found->second.where.empty()) {
    return found->second.where;
  }
  return m_origin.empty() ? "machine " + m_machine + ": settings." + key : m_origin + ".settings." + key;
}

void SettingsReader::error(const std::string& key, const std::string& what) {
  m_errors.push_back(where(key) + ": " + what);
}

void SettingsReader::check_keys(const std::set<std::string>& known) {
  for (const auto& [key, setting] : m_settings) {
    auto head = key.substr(0, key.find('.'));
    if (!known.contains(head)) {
      error(key, "unknown key for backend " + m_backend);
    }
  }
}

std::optional<std::string> SettingsReader::string(const std::string& key, bool required) {
  auto found = m_settings.find(key);
  if (found == m_settings.end()) {
    if (required) {
      error(key, "missing (required by backend " + m_backend + ")");
    }
    return std::nullopt;
  }
  if (found->second.is_list || found->second.values.size() != 1) {
    error(key, "must be a single value, not a list");
    return std::nullopt;
  }
  return found->second.values.front();
}

std::optional<std::string> SettingsReader::choice(const std::string& key, const std::vector<std::string>& choices) {
  auto value = string(key);
  if (value && std::find(choices.begin(), choices.end(), *value) == choices.end()) {
    error(key, "unknown value '" + *value + "' (known: " + base::join(choices, ", ") + ")");
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<std::string>> SettingsReader::list(const std::string& key, bool required, bool allow_scalar) {
  auto found = m_settings.find(key);
  if (found == m_settings.end()) {
    if (required) {
      error(key, "missing (required by backend " + m_backend + ")");
    }
    return std::nullopt;
  }
  if (!found->second.is_list && !allow_scalar) {
    error(key, "must be a list (an argv: [program, arg, ...])");
    return std::nullopt;
  }
  return found->second.values;
}

std::optional<long> SettingsReader::integer(const std::string& key, long min, long max) {
  auto text = string(key);
  if (!text) {
    return std::nullopt;
  }
  try {
    std::size_t used = 0;
    long value = std::stol(*text, &used);
    if (used == text->size() && value >= min && value <= max) {
      return value;
    }
  } catch (const std::exception&) {
  }
  error(key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + *text + "'");
  return std::nullopt;
}

std::optional<bool> SettingsReader::boolean(const std::string& key) {
  auto text = string(key);
  if (!text) {
    return std::nullopt;
  }
  if (*text == "true" || *text == "yes" || *text == "on") {
    return true;
  }
  if (*text == "false" || *text == "no" || *text == "off") {
    return false;
  }
  error(key, "expected true or false, got '" + *text + "'");
  return std::nullopt;
}

std::optional<std::chrono::seconds> SettingsReader::duration(const std::string& key, std::chrono::seconds min) {
  auto text = string(key);
  if (!text) {
    return std::nullopt;
  }
  auto parsed = base::parse_duration(*text);
  if (!parsed || *parsed < min) {
    error(key, "expected a duration of at least " +
                 base::format_duration(std::chrono::duration_cast<std::chrono::milliseconds>(min)) +
                 " (like 90s, 5m), got '" + *text + "'");
    return std::nullopt;
  }
  return std::chrono::duration_cast<std::chrono::seconds>(*parsed);
}

std::optional<fs::path> SettingsReader::path(const std::string& key, bool required, bool must_exist,
                                             bool allow_relative) {
  auto text = string(key, required);
  if (!text) {
    return std::nullopt;
  }
  fs::path p(*text);
  if (text->empty()) {
    error(key, "must not be empty");
    return std::nullopt;
  }
  if (!allow_relative && p.is_relative()) {
    error(key, "'" + *text + "' must be an absolute path");
    return std::nullopt;
  }
  std::error_code ec;
  if (must_exist && !fs::is_regular_file(p, ec)) {
    error(key, "'" + *text + "': no such file");
    return std::nullopt;
  }
  return p;
}

std::map<std::string, std::string> SettingsReader::group(const std::string& prefix) {
  std::map<std::string, std::string> out;
  for (const auto& [key, setting] : m_settings) {
    if (key.starts_with(prefix + ".")) {
      if (auto value = string(key)) {
        out[key.substr(prefix.size() + 1)] = *value;
      }
    }
  }
  return out;
}

Error SettingsReader::to_error() const { return Error{ErrorCode::invalid_config, base::join(m_errors, "\n")}; }

} // namespace bisectd::lab
