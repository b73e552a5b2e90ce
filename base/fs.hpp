#pragma once
// File helpers with Result errors that name the path.

#include "base/error.hpp"
#include "base/fd.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace bisectd::base {

// The daemon's own files (config, token, its store).
Result<std::string> read_file(const std::filesystem::path& path);

// Files a watched tree's code may have written or replaced: the worktree, the build dir, their outputs. The last
// path component is opened without following a symlink (O_NOFOLLOW) and must be a regular file of at most
// `max_bytes`, checked on the open descriptor before a byte is read; anything else is refused with
// ErrorCode::invalid_input and a one-line message naming the path and why ("a symlink", "not a regular file",
// "larger than N bytes"), never the content. Real read failures are ErrorCode::io.
Result<Fd> open_untrusted(const std::filesystem::path& path, std::uintmax_t max_bytes);
Result<std::string> read_untrusted(const std::filesystem::path& path, std::uintmax_t max_bytes);
// Copies such a file to `to` (created or truncated: a daemon-owned path) with its permission bits (0777 of them).
// A full file system (ENOSPC, EDQUOT) is ErrorCode::infra.
Status copy_untrusted(const std::filesystem::path& from, const std::filesystem::path& to, std::uintmax_t max_bytes);

// Writes via a temporary file and rename, so readers never see half a file.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

Status append_file(const std::filesystem::path& path, std::string_view content);

Status make_dirs(const std::filesystem::path& path);

// A new empty directory under `parent` (default: the system temp dir) named `prefix`XXXXXX.
Result<std::filesystem::path> make_temp_dir(std::string_view prefix, const std::filesystem::path& parent = {});

// ${XDG_CACHE_HOME:-~/.cache}/bisectd
std::filesystem::path default_cache_dir();

} // namespace bisectd::base
