#include "kbuild/relevance.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"

#include <system_error>

namespace bisectd::kbuild {

namespace fs = std::filesystem;

namespace {

// The largest .cmd file read: a real one lists a file's dependencies, well under 1 MB.
constexpr std::uintmax_t k_cmd_file_cap = 16 * 1024 * 1024;

// `path` (absolute, or relative to `objdir`) as a srctree-relative path, or "" when outside the source tree.
std::string relative_to(std::string_view path, const fs::path& srctree, const fs::path& objdir) {
  std::string root = srctree.lexically_normal().string();
  if (!root.empty() && root.back() != '/') {
    root += '/';
  }
  fs::path full = path.starts_with('/') ? fs::path(path) : objdir / path;
  std::string normal = full.lexically_normal().string();
  return normal.starts_with(root) ? normal.substr(root.size()) : "";
}

// The value of "source_<target> := <path>" or "deps_<target> := \", or the whole line for continuation lines.
std::string_view entry_of(std::string_view line) {
  if (line.starts_with("source_") || line.starts_with("deps_")) {
    auto assign = line.find(":=");
    return assign == std::string_view::npos ? std::string_view{} : base::trim(line.substr(assign + 2));
  }
  return line;
}

// Kbuild's own machinery: a change there may alter what is built even if no compiled file changes.
bool steers_build(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.starts_with("Makefile") || name.starts_with("Kbuild") || name.starts_with("Kconfig") ||
         path.starts_with("scripts/") || slash == std::string_view::npos;
}

} // namespace

std::vector<std::string> parse_cmd_file(std::string_view text, const fs::path& srctree, const fs::path& objdir) {
  std::vector<std::string> out;
  bool in_deps = false;
  for (const auto& raw : base::split(text, '\n')) {
    std::string_view line = base::trim(raw);
    bool starts_deps = line.starts_with("deps_");
    if (!(in_deps || starts_deps || line.starts_with("source_"))) {
      continue;
    }
    bool continues = line.ends_with("\\");
    std::string_view entry = base::trim(entry_of(continues ? line.substr(0, line.size() - 1) : line));
    in_deps = (in_deps || starts_deps) && continues;
    if (entry.empty() || entry.starts_with("$(")) {
      continue;
    }
    if (auto relative = relative_to(entry, srctree, objdir); !relative.empty()) {
      out.push_back(relative);
    }
  }
  return out;
}

Result<std::set<std::string>> scan_used_sources(const fs::path& objdir, const fs::path& srctree) {
  std::set<std::string> used;
  std::error_code ec;
  fs::recursive_directory_iterator it(objdir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    return make_error(ErrorCode::io, objdir.string() + ": " + ec.message());
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      return make_error(ErrorCode::io, objdir.string() + ": " + ec.message());
    }
    auto name = it->path().filename().string();
    if (!name.starts_with('.') || !name.ends_with(".cmd") || it->is_directory(ec)) {
      continue;
    }
    // Written by the commit's build: a link, a fifo or a huge file is refused (the build is not trusted further).
    auto text = base::read_untrusted(it->path(), k_cmd_file_cap);
    if (!text && text.error().code == ErrorCode::invalid_input) {
      return std::unexpected(text.error());
    }
    if (!text) {
      continue; // a file make is rewriting right now; the others still count
    }
    for (auto& path : parse_cmd_file(*text, srctree, objdir)) {
      used.insert(std::move(path));
    }
  }
  return used;
}

bool touches_build(const std::vector<std::string>& paths, const std::set<std::string>& used) {
  if (used.empty()) {
    return true;
  }
  for (const auto& path : paths) {
    if (used.contains(path) || steers_build(path)) {
      return true;
    }
  }
  return false;
}

} // namespace bisectd::kbuild
