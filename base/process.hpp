#pragma once
// Child processes from argv vectors (never a shell): timeouts kill the whole process group.

#include "base/error.hpp"
#include "base/sandbox.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::base {

struct Command {
  std::vector<std::string> argv;             // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;    // added to (or overriding) the inherited environment
  std::filesystem::path cwd;                 // empty: inherit
  std::chrono::milliseconds timeout{0};      // 0: none
  std::filesystem::path stdout_path;         // empty: capture into ExitStatus::out
  bool stderr_to_stdout = false;             // 2>&1 (into the same file or capture)
  std::filesystem::path stderr_path;         // empty (and not merged): capture into ExitStatus::err
  bool append = false;                       // append to stdout_path/stderr_path instead of truncating
  // > 0 with stdout_path: the file keeps at most about this many bytes of the output, its head and its tail, with a
  // line saying how much was left out between them (base/head_tail.hpp); the rest is read and dropped.
  std::size_t stdout_limit = 0;
  std::string stdin_data;                    // written to the child's stdin, then closed
  std::filesystem::path stdin_path;          // or: the child reads this file as its stdin (a file too big to hold)
  const std::atomic<bool>* cancel = nullptr; // when set to true, the child is killed (ErrorCode::cancelled)
  // Run the child (and what it starts) under SCHED_IDLE: it gets a CPU only when nothing else wants one. For
  // speculative work (prebuilds) that must not slow down, or add noise to, the benchmarks that were asked for.
  bool idle_priority = false;
  std::size_t capture_limit = 16 * 1024 * 1024; // captured bytes kept per stream (the tail is dropped)
  // Descendants that leave the process group (setsid, daemonised) are killed when the command ends, however it
  // ends (base/process_tree.hpp). Set for a command whose job is to start such a daemon, like a PDU stand-in
  // that boots a VM: what it detaches is left alone, then and at the next daemon's start-up.
  bool leave_detached = false;
  // Run it under bubblewrap (base/sandbox.hpp) with this view, when the deployment's sandbox is enabled.
  std::optional<Sandbox> sandbox;
  // Called every `progress_interval` (> 0) while the child runs, from the waiting thread: long builds say
  // how far they got instead of going silent for minutes.
  std::chrono::milliseconds progress_interval{0};
  std::function<void(std::chrono::milliseconds elapsed)> progress;
};

// What the child (and the descendants it waited for) used, from wait4(2); absent when it was not reaped by us.
struct ChildUsage {
  double user_seconds = 0;
  double system_seconds = 0;
  long voluntary_switches = 0;
  long involuntary_switches = 0;
  long minor_faults = 0;
  long major_faults = 0;
  // 0 when unknown: exec records the spawner's own peak as the child's (the daemon's memory, shared until then),
  // so a peak not above ours may be ours, not the child's.
  long max_rss_kb = 0;
};

struct ExitStatus {
  int code = -1;  // exit code when exited normally
  int signal = 0; // terminating signal, 0 if none
  bool timed_out = false;
  std::string out; // captured stdout (if not sent to a file)
  std::string err; // captured stderr (if not sent to a file or merged)
  std::chrono::milliseconds duration{0};
  std::optional<ChildUsage> usage;
  // Writing the output into stdout_path (with stdout_limit) failed, the first such error: the file is cut short.
  // Code infra for a full file system (ENOSPC, EDQUOT).
  std::optional<Error> output_error;

  [[nodiscard]] bool ok() const { return !timed_out && signal == 0 && code == 0; }
  // "exit 2", "killed by signal 9", "timed out after 30.0s"
  [[nodiscard]] std::string describe() const;
};

// Runs `command` to completion. Errors: the program could not be started (ErrorCode::not_found / io),
// or `cancel` was raised (ErrorCode::cancelled). A non-zero exit is not an error: check ExitStatus.
Result<ExitStatus> run(const Command& command);

// Like run(), but a non-zero exit, a signal or a timeout becomes an Error whose message names the
// program and quotes the tail of its stderr (or stdout when merged).
Result<ExitStatus> run_checked(const Command& command, ErrorCode failure_code = ErrorCode::generic);

// Finds `program` in PATH; nullopt when absent.
std::optional<std::filesystem::path> find_program(const std::string& program);

} // namespace bisectd::base
