#pragma once
// Test helpers: run bisectctl in-process with captured output, and a fake bisectd (fake_bisectd.py)
// on a free loopback port.

#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace bisectd::cli::test {

struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `bisectctl args...` with every command group; `err_is_tty` fakes a terminal on stderr.
RunResult run_cli(const std::vector<std::string>& args, bool err_is_tty = false);

// A fresh directory under $BISECTD_TEST_TMP (or the system temp dir).
std::filesystem::path temp_dir(const std::string& prefix);

// fake_bisectd.py serving tests/unit/cli/canned; stopped (SIGTERM) by the destructor.
class FakeServer {
public:
  FakeServer();
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  [[nodiscard]] const std::string& url() const { return m_url; }
  // The requests received so far, one JSON object each (method, path, query, authorization, body).
  [[nodiscard]] std::vector<nlohmann::json> requests() const;

private:
  int m_pid = -1;
  std::filesystem::path m_dir;
  std::string m_url;
};

} // namespace bisectd::cli::test
