#pragma once
// A per-test scratch directory under $BISECTD_TEST_TMP (set by ctest) or the system temp dir.

#include "base/fs.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace bisectd::test {

class TempDir {
public:
  TempDir() {
    const char* parent = std::getenv("BISECTD_TEST_TMP");
    std::filesystem::path base = parent != nullptr ? parent : std::filesystem::temp_directory_path();
    std::filesystem::create_directories(base);
    auto made = base::make_temp_dir("unit-", base);
    if (!made) {
      throw std::runtime_error(made.error().message);
    }
    m_path = *made;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

  // Writes `content` to `name` under the directory (parents created); returns the full path.
  std::filesystem::path write(const std::string& name, const std::string& content, bool executable = false) const {
    auto file = m_path / name;
    std::filesystem::create_directories(file.parent_path());
    if (!base::write_file_atomic(file, content)) {
      throw std::runtime_error("cannot write " + file.string());
    }
    if (executable) {
      std::filesystem::permissions(file, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add);
    }
    return file;
  }

private:
  std::filesystem::path m_path;
};

} // namespace bisectd::test
