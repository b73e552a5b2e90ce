#include "base/fs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bisectd::base {

Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                      path.string() + ": " + std::strerror(errno));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return make_error(ErrorCode::io, tmp.string() + ": " + std::strerror(errno));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) {
      return make_error(ErrorCode::io, tmp.string() + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    return make_error(ErrorCode::io, path.string() + ": " + ec.message());
  }
  return {};
}

Status append_file(const std::filesystem::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) {
    return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
  }
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out.flush()) {
    return make_error(ErrorCode::io, path.string() + ": write failed");
  }
  return {};
}

Status make_dirs(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return make_error(ErrorCode::io, path.string() + ": " + ec.message());
  }
  return {};
}

Result<std::filesystem::path> make_temp_dir(std::string_view prefix, const std::filesystem::path& parent) {
  auto base = parent.empty() ? std::filesystem::temp_directory_path() : parent;
  std::string pattern = (base / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return make_error(ErrorCode::io, pattern + ": " + std::strerror(errno));
  }
  return std::filesystem::path(pattern);
}

std::filesystem::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "bisectd";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "/tmp") / ".cache" / "bisectd";
}

} // namespace bisectd::base
