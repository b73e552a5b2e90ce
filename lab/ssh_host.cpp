#include "lab/ssh_host.hpp"

#include "base/fs.hpp"
#include "lab/machine.hpp"

#include <spdlog/spdlog.h>

namespace bisectd::lab {

using namespace std::chrono_literals;

namespace {

class RealHostCommands final : public HostCommands {
public:
  Result<base::ExitStatus> run(const base::Command& command) override { return base::run(command); }
  void sleep(std::chrono::milliseconds duration) override { std::this_thread::sleep_for(duration); }
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  bool has_program(const std::string& program) override { return base::find_program(program).has_value(); }
};

// Below this much room left, the console is not reconnected again.
constexpr std::uintmax_t k_min_console_room = 64 * 1024;

} // namespace

std::shared_ptr<HostCommands> real_host_commands() { return std::make_shared<RealHostCommands>(); }

ConsoleCapture::ConsoleCapture(HostCommands& host, const std::vector<std::string>& argv, std::filesystem::path log)
    : m_log(std::move(log)) {
  (void)base::append_file(m_log, "");
  if (argv.empty()) {
    return;
  }
  m_thread = std::jthread([this, &host, argv](std::stop_token token) {
    while (!token.stop_requested()) {
      m_started = true;
      // Every reconnection appends: the whole log, not each connection, stays within the limit.
      std::error_code ec;
      auto size = std::filesystem::file_size(m_log, ec);
      if (!ec && size + k_min_console_room > k_log_limit) {
        (void)base::append_file(m_log, "\nbisectd: console log full (" + std::to_string(size) + " bytes): "
                                       "no more is kept for this visit\n");
        return;
      }
      base::Command cmd;
      cmd.argv = argv;
      cmd.stdout_path = m_log;
      cmd.stdout_limit = k_log_limit - (ec ? 0 : size);
      cmd.append = true;
      cmd.stderr_path = "/dev/null";
      cmd.cancel = &m_stop;
      auto status = host.run(cmd);
      if (!status && status.error().code != ErrorCode::cancelled) {
        spdlog::warn("ssh console: {}", status.error().message);
      }
      for (int i = 0; i < 10 && !token.stop_requested(); ++i) {
        host.sleep(100ms);
      }
    }
  });
  // Attached before anything happens to the box (bounded: a console that cannot start does not stop a visit).
  for (int i = 0; i < 100 && !m_started; ++i) {
    std::this_thread::sleep_for(10ms);
  }
}

void ConsoleCapture::stop() {
  if (m_thread.joinable()) {
    m_thread.request_stop();
    m_stop = true;
    m_thread.join();
  }
}

std::string ConsoleCapture::text() const { return base::read_file(m_log).value_or(""); }

} // namespace bisectd::lab
