#pragma once
// A machine's backend settings as the lab file wrote them, and typed reads of them that collect
// "file:line: machines[i].settings.key: what" errors. The daemon's config reader fills `Settings` (it is the only
// yaml-cpp user); each backend validates its own keys here, so lab/ never sees YAML.

#include "base/error.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bisectd::lab {

// One setting: a scalar (`values` has one element) or a list of scalars. Nested maps are flattened into dotted
// keys ("timeouts.job"). `where` prefixes errors: "lab.yaml:12: machines[0].settings.port".
struct Setting {
  std::vector<std::string> values;
  bool is_list = false;
  std::string where;
};
using Settings = std::map<std::string, Setting>;

// A setting written in code (tests, tools); its errors name it as "machine NAME: settings.KEY".
Setting scalar_setting(std::string value);
Setting list_setting(std::vector<std::string> values);

class SettingsReader {
public:
  // `origin` is where the lab file defines the machine ("lab.yaml:2: machines[0]"), so that a missing key's error
  // names it; "" for machines written in code.
  SettingsReader(std::string machine, std::string backend, const Settings& settings, std::string origin = "")
      : m_machine(std::move(machine)), m_backend(std::move(backend)), m_settings(settings),
        m_origin(std::move(origin)) {}

  // Records an error for every key not in `known` (a dotted key counts by its first part: "timeouts").
  void check_keys(const std::set<std::string>& known);
  [[nodiscard]] bool has(const std::string& key) const { return m_settings.contains(key); }

  // A scalar. Missing → nullopt (an error when `required`); a list → error.
  std::optional<std::string> string(const std::string& key, bool required = false);
  // A scalar that must be one of `choices`.
  std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& choices);
  // A list of scalars (an argv, tags); a scalar is an error unless `allow_scalar` (then a one-element list).
  std::optional<std::vector<std::string>> list(const std::string& key, bool required = false,
                                               bool allow_scalar = false);
  std::optional<long> integer(const std::string& key, long min, long max);
  std::optional<bool> boolean(const std::string& key);
  // "300s", "5m"; at least `min`.
  std::optional<std::chrono::seconds> duration(const std::string& key,
                                               std::chrono::seconds min = std::chrono::seconds(1));
  // A path that must name an existing file when `must_exist`; a relative path is an error unless `allow_relative`.
  std::optional<std::filesystem::path> path(const std::string& key, bool required = false, bool must_exist = false,
                                            bool allow_relative = true);
  // Every key under `prefix.` (e.g. "timeouts") as key-without-prefix → scalar.
  std::map<std::string, std::string> group(const std::string& prefix);

  // Records an error for `key` (a setting of this machine).
  void error(const std::string& key, const std::string& what);

  [[nodiscard]] bool ok() const { return m_errors.empty(); }
  [[nodiscard]] const std::vector<std::string>& errors() const { return m_errors; }
  // Every error, one per line, as one invalid_config Error.
  [[nodiscard]] Error to_error() const;

private:
  [[nodiscard]] std::string where(const std::string& key) const;

  std::string m_machine;
  std::string m_backend;
  const Settings& m_settings;
  std::string m_origin;
  std::vector<std::string> m_errors;
};

} // namespace bisectd::lab
