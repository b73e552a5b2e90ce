#pragma once
// Shared helpers of the mail transport tests: temp dirs, file reading, a free loopback port.

#include <filesystem>
#include <string>

namespace bisectd::testing {

// A fresh directory under $BISECTD_TEST_TMP (or the system temp dir).
std::filesystem::path temp_dir(const std::string& prefix);

// The file's content, "" when unreadable.
std::string slurp(const std::filesystem::path& path);

// A loopback TCP port that nothing listens on right now.
int unused_port();

} // namespace bisectd::testing
