#include "daemon/config/yaml_reader.hpp"

#include "base/units.hpp"

namespace bisectd::daemon::config {

namespace {
std::string dotted(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}
} // namespace

YAML::Node YamlReader::load(const std::string& text) {
  try {
    auto node = YAML::Load(text);
    if (!node.IsMap()) {
      m_errors.push_back(m_file.string() + ":1: the file must be a YAML mapping of keys");
      return YAML::Node(YAML::NodeType::Map);
    }
    std::size_t budget = k_max_nodes;
    check_duplicate_keys(node, "", 0, budget);
    return node;
  } catch (const YAML::Exception& e) {
    m_errors.push_back(m_file.string() + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax: " + e.msg);
    return YAML::Node(YAML::NodeType::Map);
  }
}

// yaml-cpp 0.7 keeps every pair of a mapping, duplicates too, and map[key] answers the first: a second `env:` or
// `command:` would be read by no one, silently. Every mapping of the file is checked, at any depth.
void YamlReader::check_duplicate_keys(const YAML::Node& node, const std::string& prefix, int depth,
                                      std::size_t& budget) {
  if (budget == 0) {
    return; // the error is recorded already
  }
  std::string where = prefix.empty() ? "file" : prefix;
  if (depth > k_max_depth || --budget == 0) { // an alias bomb or runaway nesting: no config file looks like it
    error(node, where,
          depth > k_max_depth ? "nested more than " + std::to_string(k_max_depth) + " levels"
                              : "more than " + std::to_string(k_max_nodes) + " values");
    budget = 0;
    return;
  }
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size() && budget > 0; ++i) {
      check_duplicate_keys(node[i], prefix + "[" + std::to_string(i) + "]", depth + 1, budget);
    }
    return;
  }
  if (!node.IsMap()) {
    return;
  }
  std::map<std::string, int> first_line;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      continue; // YamlReader::key refuses such keys where they are read
    }
    const std::string& name = entry.first.Scalar();
    int line = entry.first.Mark().line + 1;
    if (auto [seen, fresh] = first_line.emplace(name, line); !fresh) {
      error(entry.first, dotted(prefix, name), "duplicate key (first at line " + std::to_string(seen->second) + ")");
      continue;
    }
    check_duplicate_keys(entry.second, dotted(prefix, name), depth + 1, budget);
  }
}

void YamlReader::error(const YAML::Node& node, const std::string& key, const std::string& what) {
  auto line = node.IsDefined() ? node.Mark().line + 1 : 0;
  m_errors.push_back(m_file.string() + ":" + std::to_string(line > 0 ? line : 1) + ": " + key + ": " + what);
}

std::optional<std::string> YamlReader::key(const YAML::Node& key, const std::string& prefix) {
  if (!key.IsScalar()) {
    error(key, prefix.empty() ? "key" : prefix, "keys must be plain strings");
    return std::nullopt;
  }
  return key.Scalar();
}

void YamlReader::check_keys(const YAML::Node& map, const std::string& prefix, const std::set<std::string>& known) {
  if (!map.IsMap()) {
    return;
  }
  std::string list;
  for (const auto& k : known) {
    list += (list.empty() ? "" : ", ") + k;
  }
  for (const auto& entry : map) {
    auto name = key(entry.first, prefix);
    if (name && !known.contains(*name)) {
      error(entry.first, dotted(prefix, *name), "unknown key (known: " + list + ")");
    }
  }
}

YAML::Node YamlReader::lookup(const YAML::Node& map, const std::string& prefix, const std::string& key, bool required) {
  auto node = map[key];
  if (!node && required) {
    error(map, dotted(prefix, key), "missing");
  }
  return node;
}

std::optional<std::string> YamlReader::string(const YAML::Node& map, const std::string& prefix, const std::string& key,
                                              bool required) {
  auto node = lookup(map, prefix, key, required);
  if (!node) {
    return std::nullopt;
  }
  if (!node.IsScalar()) {
    error(node, dotted(prefix, key), "must be a string");
    return std::nullopt;
  }
  return node.as<std::string>();
}

std::optional<std::vector<std::string>> YamlReader::string_list(const YAML::Node& map, const std::string& prefix,
                                                                const std::string& key, bool required) {
  auto node = lookup(map, prefix, key, required);
  if (!node) {
    return std::nullopt;
  }
  if (!node.IsSequence()) {
    error(node, dotted(prefix, key), "must be a list, e.g. [make, bench]");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& item : node) {
    if (!item.IsScalar()) {
      error(item, dotted(prefix, key), "list items must be strings");
      return std::nullopt;
    }
    out.push_back(item.as<std::string>());
  }
  return out;
}

std::optional<std::map<std::string, std::string>>
YamlReader::string_map(const YAML::Node& map, const std::string& prefix, const std::string& key) {
  auto node = map[key];
  if (!node) {
    return std::nullopt;
  }
  if (!node.IsMap()) {
    error(node, dotted(prefix, key), "must be a mapping");
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& entry : node) {
    auto name = this->key(entry.first, dotted(prefix, key));
    if (!name) {
      continue;
    }
    if (!entry.second.IsScalar()) {
      error(entry.second, dotted(prefix, key + "." + *name), "must be a scalar");
      continue;
    }
    out[*name] = entry.second.as<std::string>();
  }
  return out;
}

namespace {

std::string location(const std::filesystem::path& file, const YAML::Node& node, const std::string& key) {
  return file.string() + ":" + std::to_string(node.Mark().line + 1) + ": " + key;
}

} // namespace

std::string YamlReader::where(const YAML::Node& node, const std::string& key) const {
  return location(m_file, node, key);
}

lab::Settings YamlReader::machine_settings(const YAML::Node& map, const std::string& prefix) {
  lab::Settings out;
  auto root = section(map, prefix, "settings");
  // Depth-first over nested maps; a key path is at most a few levels deep in any real lab file.
  std::vector<std::pair<std::string, YAML::Node>> pending;
  for (const auto& entry : root) {
    if (auto name = key(entry.first, dotted(prefix, "settings"))) {
      pending.emplace_back(*name, entry.second);
    }
  }
  while (!pending.empty()) {
    auto [key, node] = pending.back();
    pending.pop_back();
    auto dotted_key = dotted(prefix, "settings." + key);
    lab::Setting setting{{}, false, location(m_file, node, dotted_key)};
    if (node.IsMap()) {
      for (const auto& entry : node) {
        if (auto name = this->key(entry.first, dotted_key)) {
          pending.emplace_back(key + "." + *name, entry.second);
        }
      }
      continue;
    }
    if (node.IsSequence()) {
      setting.is_list = true;
      for (const auto& item : node) {
        if (!item.IsScalar()) {
          error(item, dotted_key, "list items must be scalars");
          continue;
        }
        setting.values.push_back(item.as<std::string>());
      }
    } else if (node.IsScalar()) {
      setting.values.push_back(node.as<std::string>());
    } else {
      error(node, dotted_key, "must be a value, a list or a mapping");
      continue;
    }
    out[key] = std::move(setting);
  }
  return out;
}

std::optional<long> YamlReader::integer(const YAML::Node& map, const std::string& prefix, const std::string& key,
                                        long min, long max) {
  auto text = string(map, prefix, key);
  if (!text) {
    return std::nullopt;
  }
  try {
    std::size_t used = 0;
    long value = std::stol(*text, &used);
    if (used != text->size() || value < min || value > max) {
      throw std::out_of_range("range");
    }
    return value;
  } catch (const std::exception&) {
    error(map[key], dotted(prefix, key),
          "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", not '" + *text +
            "'");
    return std::nullopt;
  }
}

std::optional<bool> YamlReader::boolean(const YAML::Node& map, const std::string& prefix, const std::string& key) {
  auto text = string(map, prefix, key);
  if (!text) {
    return std::nullopt;
  }
  if (*text == "true" || *text == "yes" || *text == "on") {
    return true;
  }
  if (*text == "false" || *text == "no" || *text == "off") {
    return false;
  }
  error(map[key], dotted(prefix, key), "must be true or false, not '" + *text + "'");
  return std::nullopt;
}

std::optional<std::chrono::seconds> YamlReader::duration(const YAML::Node& map, const std::string& prefix,
                                                         const std::string& key) {
  auto text = string(map, prefix, key);
  if (!text) {
    return std::nullopt;
  }
  auto value = base::parse_duration(*text);
  if (!value || value->count() < 1000) {
    error(map[key], dotted(prefix, key), value ? "must be at least 1s" : value.error().message);
    return std::nullopt;
  }
  return std::chrono::duration_cast<std::chrono::seconds>(*value);
}

std::optional<double> YamlReader::percent(const YAML::Node& map, const std::string& prefix, const std::string& key) {
  auto text = string(map, prefix, key);
  if (!text) {
    return std::nullopt;
  }
  auto value = base::parse_percent(*text);
  if (!value || *value <= 0 || *value >= 1) {
    error(map[key], dotted(prefix, key), value ? "must be between 0% and 100%" : value.error().message);
    return std::nullopt;
  }
  return *value;
}

YAML::Node YamlReader::section(const YAML::Node& map, const std::string& prefix, const std::string& key,
                               bool required) {
  auto node = map[key];
  if (!node) {
    if (required) {
      error(map, dotted(prefix, key), "missing section");
    }
    return YAML::Node(YAML::NodeType::Map);
  }
  if (!node.IsMap()) {
    error(node, dotted(prefix, key), "must be a mapping like {key: value}");
    return YAML::Node(YAML::NodeType::Map);
  }
  return node;
}

Error YamlReader::to_error(ErrorCode code) const {
  if (m_errors.empty()) {
    return Error{code, "no error"};
  }
  std::string message = m_errors.front();
  if (m_errors.size() > 1) {
    message += " (and " + std::to_string(m_errors.size() - 1) + " more)";
  }
  return Error{code, message};
}

} // namespace bisectd::daemon::config
