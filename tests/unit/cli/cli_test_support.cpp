#include "cli_test_support.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "cli/commands.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace bisectd::cli::test {

RunResult run_cli(const std::vector<std::string>& args, bool err_is_tty) {
  std::ostringstream out;
  std::ostringstream err;
  std::vector<std::string> argv = {"bisectctl"};
  argv.insert(argv.end(), args.begin(), args.end());
  int code = run_app(argv, command_groups(), Io{out, err, err_is_tty});
  return {code, out.str(), err.str()};
}

std::filesystem::path temp_dir(const std::string& prefix) {
  const char* root = std::getenv("BISECTD_TEST_TMP");
  std::filesystem::path parent = root != nullptr ? root : std::filesystem::temp_directory_path();
  std::filesystem::create_directories(parent);
  auto dir = base::make_temp_dir(prefix, parent);
  if (!dir) {
    throw std::runtime_error(dir.error().message);
  }
  return *dir;
}

FakeServer::FakeServer() : m_dir(temp_dir("cli-fake-")) {
  std::string script = BISECTD_SOURCE_DIR "/tests/unit/cli/fake_bisectd.py";
  std::string canned = BISECTD_SOURCE_DIR "/tests/unit/cli/canned";
  std::string port_file = (m_dir / "port").string();
  std::string log_file = (m_dir / "requests.log").string();
  std::vector<std::string> args = {"python3", script, canned, port_file, log_file};
  std::vector<char*> argv;
  for (auto& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  if (posix_spawnp(&m_pid, "python3", nullptr, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start python3 for the fake bisectd");
  }
  for (int i = 0; i < 200 && !std::filesystem::exists(port_file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  auto port = base::read_file(port_file);
  if (!port) {
    throw std::runtime_error("fake bisectd did not start: " + port.error().message);
  }
  m_url = "http://127.0.0.1:" + std::string(base::trim(*port));
}

FakeServer::~FakeServer() {
  if (m_pid > 0) {
    kill(m_pid, SIGTERM);
    int status = 0;
    waitpid(m_pid, &status, 0);
  }
}

std::vector<nlohmann::json> FakeServer::requests() const {
  std::vector<nlohmann::json> out;
  auto text = base::read_file(m_dir / "requests.log");
  if (text) {
    for (const auto& line : base::split_lines(*text)) {
      out.push_back(nlohmann::json::parse(line));
    }
  }
  return out;
}

} // namespace bisectd::cli::test
