// Kconfig fragments and .config files: parse, merge, and check which wanted options survived.

#include "kbuild/kconfig.hpp"

#include "base/strings.hpp"

#include <cctype>
#include <optional>
#include <set>

namespace bisectd::kbuild {

namespace {

constexpr std::string_view k_not_set_suffix = " is not set";

bool is_option_name(std::string_view name) {
  if (!base::starts_with(name, "CONFIG_") || name.size() == 7) {
    return false;
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

// The option a line sets, nullopt for blank lines, comments and anything else.
std::optional<KconfigOption> option_of_line(std::string_view line) {
  line = base::trim(line);
  if (base::starts_with(line, "# CONFIG_") && base::ends_with(line, k_not_set_suffix)) {
    auto name = line.substr(2, line.size() - 2 - k_not_set_suffix.size());
    if (is_option_name(name)) {
      return KconfigOption{std::string(name), "n"};
    }
    return std::nullopt;
  }
  auto eq = line.find('=');
  if (eq == std::string_view::npos || !is_option_name(line.substr(0, eq)) || eq + 1 == line.size()) {
    return std::nullopt;
  }
  return KconfigOption{std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))};
}

} // namespace

Result<std::vector<KconfigOption>> parse_fragment(std::string_view text, std::string_view source) {
  std::vector<KconfigOption> options;
  int number = 0;
  for (const auto& raw : base::split_lines(text)) {
    ++number;
    auto line = base::trim(raw);
    if (auto option = option_of_line(line)) {
      options.push_back(std::move(*option));
    } else if (!line.empty() && line.front() != '#') {
      return make_error(ErrorCode::invalid_config, std::string(source) + ":" + std::to_string(number) +
                                                     ": not a kconfig option line: " + std::string(line));
    } else if (base::starts_with(line, "# CONFIG_") && base::ends_with(line, k_not_set_suffix)) {
      return make_error(ErrorCode::invalid_config,
                        std::string(source) + ":" + std::to_string(number) + ": bad option name: " + std::string(line));
    }
  }
  return options;
}

std::map<std::string, std::string> parse_config(std::string_view text) {
  std::map<std::string, std::string> config;
  for (const auto& line : base::split_lines(text)) {
    if (auto option = option_of_line(line)) {
      config[option->name] = option->value;
    }
  }
  return config;
}

std::string render_option(const KconfigOption& option) {
  if (option.value == "n") {
    return "# " + option.name + std::string(k_not_set_suffix);
  }
  return option.name + "=" + option.value;
}

std::string merge_fragment(std::string_view config, const std::vector<KconfigOption>& options) {
  std::set<std::string> names;
  for (const auto& option : options) {
    names.insert(option.name);
  }
  std::string merged;
  for (const auto& line : base::split_lines(config)) {
    auto option = option_of_line(line);
    if (!option || !names.contains(option->name)) {
      merged += line;
      merged += '\n';
    }
  }
  for (const auto& option : options) {
    merged += render_option(option);
    merged += '\n';
  }
  return merged;
}

std::vector<std::string> missing_options(const std::map<std::string, std::string>& config,
                                         const std::vector<KconfigOption>& wanted) {
  std::map<std::string, std::string> last; // a later line for the same option wins, as in the merge
  for (const auto& option : wanted) {
    last[option.name] = option.value;
  }
  std::vector<std::string> missing;
  for (const auto& [name, value] : last) {
    auto it = config.find(name);
    std::string now = it == config.end() ? "n" : it->second;
    if (now != value) {
      missing.push_back(render_option({name, value}) + " (now " + (now == "n" ? "not set" : now) + ")");
    }
  }
  return missing;
}

} // namespace bisectd::kbuild
