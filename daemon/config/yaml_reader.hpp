#pragma once
// Typed reads from yaml-cpp nodes that collect "file:line: key: what" errors instead of throwing.

#include "base/error.hpp"
#include "lab/settings.hpp"

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bisectd::daemon::config {

class YamlReader {
public:
  explicit YamlReader(std::filesystem::path file) : m_file(std::move(file)) {}

  // Parses `text`; a syntax error is recorded and an empty node returned. A key given twice in one mapping is an
  // error at the second one's line.
  YAML::Node load(const std::string& text);

  // Records an error for `key` at `node`'s line.
  void error(const YAML::Node& node, const std::string& key, const std::string& what);
  // A mapping key as text; a key that is not a plain scalar (`? [a, b]: x`) is an error under `prefix`.
  std::optional<std::string> key(const YAML::Node& key, const std::string& prefix);
  // Records an error for every key of `map` not in `known`; `prefix` is the dotted path of `map`.
  void check_keys(const YAML::Node& map, const std::string& prefix, const std::set<std::string>& known);

  // map[key]; records "missing" when absent and `required`.
  YAML::Node lookup(const YAML::Node& map, const std::string& prefix, const std::string& key, bool required);
  std::optional<std::string> string(const YAML::Node& map, const std::string& prefix, const std::string& key,
                                    bool required = false);
  std::optional<std::vector<std::string>> string_list(const YAML::Node& map, const std::string& prefix,
                                                      const std::string& key, bool required = false);
  std::optional<std::map<std::string, std::string>> string_map(const YAML::Node& map, const std::string& prefix,
                                                               const std::string& key);
  // map["settings"] as a machine's backend settings: scalars, lists of scalars, nested maps flattened into dotted
  // keys; each remembers its "file:line: prefix.settings.key" for the backend's errors.
  lab::Settings machine_settings(const YAML::Node& map, const std::string& prefix);
  // "file:line: key" of `node`, the prefix of this reader's errors about it.
  [[nodiscard]] std::string where(const YAML::Node& node, const std::string& key) const;
  std::optional<long> integer(const YAML::Node& map, const std::string& prefix, const std::string& key, long min,
                              long max);
  std::optional<bool> boolean(const YAML::Node& map, const std::string& prefix, const std::string& key);
  std::optional<std::chrono::seconds> duration(const YAML::Node& map, const std::string& prefix,
                                               const std::string& key);
  std::optional<double> percent(const YAML::Node& map, const std::string& prefix, const std::string& key);
  // A nested map (or nothing); an error when present but not a map.
  YAML::Node section(const YAML::Node& map, const std::string& prefix, const std::string& key, bool required = false);

  [[nodiscard]] bool ok() const { return m_errors.empty(); }
  [[nodiscard]] const std::vector<std::string>& errors() const { return m_errors; }
  // The collected errors as one Error (first error, "(and N more)").
  [[nodiscard]] Error to_error(ErrorCode code = ErrorCode::invalid_config) const;
  [[nodiscard]] const std::filesystem::path& file() const { return m_file; }

private:
  // Bounds of the walk below (aliases can make a small file a huge tree): far above any real config.
  static constexpr int k_max_depth = 64;
  static constexpr std::size_t k_max_nodes = 100'000;
  // Records "file:line: key: duplicate key (first at line N)" for every repeated key of every mapping under `node`.
  void check_duplicate_keys(const YAML::Node& node, const std::string& prefix, int depth, std::size_t& budget);

  std::filesystem::path m_file;
  std::vector<std::string> m_errors;
};

} // namespace bisectd::daemon::config
