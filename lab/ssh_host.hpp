#pragma once
// The daemon's side of an ssh box: the commands run on this host (ssh, scp, power_cycle, console), behind an
// interface so that the visit logic is tested against a simulated box, and the box's console captured for a visit.

#include "base/error.hpp"
#include "base/process.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bisectd::lab {

// Runs commands on the daemon's host (ssh, scp, power_cycle, console) and keeps time. Real: base::run.
class HostCommands {
public:
  virtual ~HostCommands() = default;
  virtual Result<base::ExitStatus> run(const base::Command& command) = 0;
  virtual void sleep(std::chrono::milliseconds duration) = 0;
  virtual std::chrono::steady_clock::time_point now() = 0;
  // Whether `program` is found (PATH lookup, or the path itself): a machine check's dry run of the power command.
  virtual bool has_program(const std::string& program) = 0;
};
std::shared_ptr<HostCommands> real_host_commands();

// The console command (settings.console) running for the whole visit, appending to the console log; restarted
// (once a second at most) when it exits early, as `ipmitool sol activate` does when the BMC drops the session.
class ConsoleCapture {
public:
  // Starts `argv` (nothing when empty) and waits, bounded, until it has started.
  ConsoleCapture(HostCommands& host, const std::vector<std::string>& argv, std::filesystem::path log);
  ConsoleCapture(const ConsoleCapture&) = delete;
  ConsoleCapture& operator=(const ConsoleCapture&) = delete;
  ~ConsoleCapture() { stop(); }

  void stop();
  // The console so far.
  [[nodiscard]] std::string text() const;
  [[nodiscard]] const std::filesystem::path& path() const { return m_log; }

private:
  std::filesystem::path m_log;
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_started{false};
  std::jthread m_thread;
};

} // namespace bisectd::lab
