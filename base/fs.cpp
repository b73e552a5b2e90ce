#include "base/fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace bisectd::base {

namespace {

constexpr std::size_t k_chunk = 64 * 1024;

Error open_error(const std::filesystem::path& path, int error_number) {
  return Error{error_number == ENOENT ? ErrorCode::not_found : ErrorCode::io,
               path.string() + ": " + std::strerror(error_number)};
}

Error refused(const std::filesystem::path& path, const std::string& why) {
  return Error{ErrorCode::invalid_input, path.string() + ": refused: " + why};
}

// Reads `fd` to its end, at most `max_bytes` (a file that grows past its checked size is refused, not read on).
Result<std::string> read_all(int fd, const std::filesystem::path& path, std::uintmax_t max_bytes) {
  std::string content;
  std::array<char, k_chunk> buffer{};
  while (true) {
    auto got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
    }
    if (got == 0) {
      return content;
    }
    if (content.size() + static_cast<std::size_t>(got) > max_bytes) {
      return std::unexpected(refused(path, "larger than " + std::to_string(max_bytes) + " bytes"));
    }
    content.append(buffer.data(), static_cast<std::size_t>(got));
  }
}

} // namespace

Result<std::string> read_file(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return std::unexpected(open_error(path, errno));
  }
  return read_all(fd.get(), path, UINTMAX_MAX);
}

Result<Fd> open_untrusted(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  // O_NONBLOCK: opening a fifo must not wait for a writer; O_NOFOLLOW: a symlink fails with ELOOP.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) {
    if (errno == ELOOP) {
      return std::unexpected(refused(path, "a symlink"));
    }
    return std::unexpected(open_error(path, errno));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) {
    return make_error(ErrorCode::io, path.string() + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return std::unexpected(refused(path, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file"));
  }
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    return std::unexpected(refused(path, "larger than " + std::to_string(max_bytes) + " bytes (" +
                                           std::to_string(st.st_size) + ")"));
  }
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Result<std::string> read_untrusted(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  BISECTD_TRY_ASSIGN(auto fd, open_untrusted(path, max_bytes));
  return read_all(fd.get(), path, max_bytes);
}

Status copy_untrusted(const std::filesystem::path& from, const std::filesystem::path& to, std::uintmax_t max_bytes) {
  BISECTD_TRY_ASSIGN(auto in, open_untrusted(from, max_bytes));
  BISECTD_TRY_ASSIGN(auto out, open_output(to, false));
  // The permission bits go along (a benchmark binary stays executable); set-id and sticky bits never do.
  struct stat st{};
  if (::fstat(in.get(), &st) != 0 || ::fchmod(out.get(), st.st_mode & 0777) != 0) {
    return make_error(ErrorCode::io, to.string() + ": " + std::strerror(errno));
  }
  std::array<char, k_chunk> buffer{};
  std::uintmax_t copied = 0;
  while (true) {
    auto got = ::read(in.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return make_error(ErrorCode::io, from.string() + ": " + std::strerror(errno));
    }
    if (got == 0) {
      return {};
    }
    copied += static_cast<std::uintmax_t>(got);
    if (copied > max_bytes) {
      return std::unexpected(refused(from, "larger than " + std::to_string(max_bytes) + " bytes"));
    }
    if (auto put = write_all(out.get(), std::string_view(buffer.data(), static_cast<std::size_t>(got))); !put) {
      return std::unexpected(put.error().context(to.string()));
    }
  }
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
