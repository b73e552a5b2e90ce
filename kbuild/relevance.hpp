#pragma once
// Which source files a kernel build actually used, from kbuild's dependency files, and whether a commit can
// matter to a build at all. A commit that touches none of the used files (another architecture, a driver the
// config leaves out, documentation) cannot change the measured kernel: the bisection gives it no prior mass
// and never builds it.

#include "base/error.hpp"

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::kbuild {

// The file kept next to a kernel build's artifacts: the used source paths, relative to the source tree, one
// per line, sorted.
inline constexpr std::string_view k_used_sources_file = "used-sources.txt";

// The source paths one `.<target>.cmd` file names (its `source_...` and `deps_...` entries), relative to
// `srctree`. Relative entries are taken from `objdir` (where make runs); entries outside the source tree
// (compiler headers, generated files in the build dir) and `$(wildcard ...)` config markers are left out.
std::vector<std::string> parse_cmd_file(std::string_view text, const std::filesystem::path& srctree,
                                        const std::filesystem::path& objdir);

// Every source path any `.*.cmd` file under `objdir` names (see parse_cmd_file). Error: io when `objdir` cannot
// be read; invalid_input naming the file when a `.*.cmd` is a symlink, not a regular file or over 16 MiB
// (base::read_untrusted).
Result<std::set<std::string>> scan_used_sources(const std::filesystem::path& objdir,
                                                const std::filesystem::path& srctree);

// True when the build can be affected by a commit that changed `paths`: one of them is a used source, or it
// steers the build itself (Makefile, Kbuild, Kconfig, scripts/, the top-level files). Conservative: an empty
// `used` set (nothing known) says true.
bool touches_build(const std::vector<std::string>& paths, const std::set<std::string>& used);

} // namespace bisectd::kbuild
