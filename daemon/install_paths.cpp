// The install layout is given by the build (GNUInstallDirs, relative to the prefix): the prefix is found from
// this executable's path, so a prefix moved as a whole (or a DESTDIR staging tree) still works.
#include "daemon/install_paths.hpp"

#include <vector>

namespace bisectd::daemon {

namespace fs = std::filesystem;

namespace {

// The prefix this executable was installed into: its folder minus BISECTD_INSTALL_BINDIR's components.
fs::path install_prefix() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  fs::path bindir(BISECTD_INSTALL_BINDIR);
  if (ec || bindir.is_absolute()) {
    return {};
  }
  std::vector<fs::path> parts(bindir.begin(), bindir.end());
  auto prefix = exe.parent_path();
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (prefix.filename() != *it) {
      return {}; // not where `cmake --install` puts it: a build tree
    }
    prefix = prefix.parent_path();
  }
  return prefix;
}

fs::path existing(const fs::path& prefix, const fs::path& relative, const fs::path& must_hold) {
  std::error_code ec;
  if (prefix.empty() || relative.is_absolute()) {
    return relative.is_absolute() && fs::exists(relative / must_hold, ec) ? relative : fs::path{};
  }
  auto dir = prefix / relative;
  return fs::exists(dir / must_hold, ec) ? dir : fs::path{};
}

} // namespace

fs::path installed_configs_dir() {
  return existing(install_prefix(), fs::path(BISECTD_INSTALL_DATADIR) / "bisectd" / "configs", "jobs");
}

fs::path installed_bench_core_dir() {
  return existing(install_prefix(), fs::path(BISECTD_INSTALL_LIBEXECDIR) / "bisectd" / "bench-core", "page_fault");
}

} // namespace bisectd::daemon
