#pragma once
// File helpers with Result errors that name the path.

#include "base/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace bisectd::base {

Result<std::string> read_file(const std::filesystem::path& path);

// Writes via a temporary file and rename, so readers never see half a file.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

Status append_file(const std::filesystem::path& path, std::string_view content);

Status make_dirs(const std::filesystem::path& path);

// A new empty directory under `parent` (default: the system temp dir) named `prefix`XXXXXX.
Result<std::filesystem::path> make_temp_dir(std::string_view prefix, const std::filesystem::path& parent = {});

// ${XDG_CACHE_HOME:-~/.cache}/bisectd
std::filesystem::path default_cache_dir();

} // namespace bisectd::base
