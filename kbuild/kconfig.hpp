#pragma once
// Kconfig text handling for the kernel recipe: fragments, .config files, merging, and the check that
// every option a job asked for survived `make olddefconfig` (Kconfig silently drops options whose
// dependencies are missing, which would make a job measure something else than it says).

#include "base/error.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::kbuild {

// One option: `CONFIG_FOO=y` → {"CONFIG_FOO", "y"}; `# CONFIG_FOO is not set` → {"CONFIG_FOO", "n"}.
// String values keep their quotes: `CONFIG_LOCALVERSION=""` → {"CONFIG_LOCALVERSION", "\"\""}.
struct KconfigOption {
  std::string name;
  std::string value;

  friend bool operator==(const KconfigOption&, const KconfigOption&) = default;
};

// Parses a fragment (or a list of extra option lines). Blank lines and comments are skipped; any
// other line that is not an option is an error naming `source` and the line number.
Result<std::vector<KconfigOption>> parse_fragment(std::string_view text, std::string_view source);

// Parses a .config: every option it sets or marks "is not set" (value "n"), by name.
std::map<std::string, std::string> parse_config(std::string_view text);

// The line that sets `option` in a .config or fragment.
std::string render_option(const KconfigOption& option);

// `config` with every line defining one of `options` removed and `options` appended (later options
// win over earlier ones with the same name), like merge_config.sh -m.
std::string merge_fragment(std::string_view config, const std::vector<KconfigOption>& options);

// The options of `wanted` that `config` (the result of olddefconfig) does not have, each rendered as
// "CONFIG_FOO=y (now not set)". "n" is satisfied by an absent option too.
std::vector<std::string> missing_options(const std::map<std::string, std::string>& config,
                                         const std::vector<KconfigOption>& wanted);

} // namespace bisectd::kbuild
