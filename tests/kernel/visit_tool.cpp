// visit_tool: one visit through lab::make_machine on a real lab, for the lab backends' visit tests
// (tests/lava/lava-test.sh, tests/integration/test_ssh_visits.py).
//   visit_tool (--backend lava|qemu|ssh [--setting KEY=VALUE]... | --lab FILE --machine NAME)
//              --artifacts DIR --log-dir DIR [--release R] [--runs N] [--primary METRIC]
//              [--resume HANDLE] [--handle-file FILE] [--monitors A,B,...] [--perf stat,profile]
//              [--check-only] -- COMMAND ARGS...
// --lab: the machine NAME of a lab file, read as the daemon reads it (relative paths are the cwd's, as bisectd's).
// Prints `key: value` lines (outcome, message, boot_id, runs, run<i>.ok, run<i>.<metric>, seconds). --handle-file:
// the visit's save_handle writes the handle there (the LAVA job id) before the visit waits. --check-only: create the
// machine and print its slots, no visit. Exit 0 when the visit itself worked (whatever its outcome), 1 on an error
// (printed as "error: <code>: <message>"), 2 on bad usage.

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "daemon/config/config.hpp"
#include "lab/machine.hpp"

#include <chrono>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace bisectd;

namespace {

int fail(const Error& error) {
  std::cout << "error: " << to_string(error.code) << ": " << error.message << "\n";
  return 1;
}

struct Args {
  std::map<std::string, std::string> options;
  std::vector<std::string> settings;
  std::vector<std::string> rest;
  bool check_only = false;
  [[nodiscard]] std::string get(const std::string& key, const std::string& fallback = "") const {
    auto found = options.find(key);
    return found == options.end() ? fallback : found->second;
  }
};

bool parse(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      args.rest.assign(argv + i + 1, argv + argc);
      return true;
    }
    if (arg == "--check-only") {
      args.check_only = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || i + 1 >= argc) {
      return false;
    }
    if (arg == "--setting") {
      args.settings.emplace_back(argv[++i]);
    } else {
      args.options[arg.substr(2)] = argv[++i];
    }
  }
  return args.check_only;
}

Result<lab::MachineSpec> make_spec(const Args& args) {
  if (auto file = args.get("lab"); !file.empty()) {
    BISECTD_TRY_ASSIGN(auto machines, daemon::config::load_lab_file(file));
    for (auto& machine : machines) {
      if (machine.name == args.get("machine")) {
        return machine;
      }
    }
    return make_error(ErrorCode::not_found, file + ": no machine '" + args.get("machine") + "'");
  }
  lab::MachineSpec spec;
  spec.name = args.get("name", "visit-tool");
  spec.group = "test";
  spec.backend = args.get("backend", "lava");
  spec.cpus = std::stoi(args.get("cpus", "1"));
  spec.memory_mb = std::stoi(args.get("memory-mb", "256"));
  for (const auto& setting : args.settings) {
    auto eq = setting.find('=');
    spec.settings[setting.substr(0, eq)] = lab::scalar_setting(eq == std::string::npos ? "" : setting.substr(eq + 1));
  }
  return spec;
}

} // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, args)) {
    std::cerr << "usage: visit_tool --backend B --artifacts DIR --log-dir DIR [...] -- COMMAND ARGS...\n";
    return 2;
  }
  auto spec = make_spec(args);
  if (!spec) {
    return fail(spec.error());
  }
  auto machine = lab::make_machine(*spec);
  if (!machine) {
    return fail(machine.error());
  }
  if (args.check_only) {
    std::cout << "slots: " << (*machine)->slots() << "\ndescribe: " << (*machine)->describe() << "\n";
    return 0;
  }
  lab::VisitRequest request;
  request.commit = args.get("commit", "0000000000000000000000000000000000000000");
  request.artifact_dir = args.get("artifacts");
  request.kernel_release = args.get("release");
  request.log_dir = args.get("log-dir");
  request.runs = std::stoi(args.get("runs", "1"));
  request.run.command = args.rest;
  request.run.timeout = std::chrono::seconds(std::stoi(args.get("run-timeout", "60")));
  request.run.primary = args.get("primary");
  for (const auto& monitor : base::split(args.get("monitors"), ',')) {
    if (!monitor.empty()) {
      request.run.monitors.insert(monitor);
    }
  }
  auto perf = "," + args.get("perf") + ",";
  request.run.perf = {.stat = perf.find(",stat,") != std::string::npos,
                      .profile = perf.find(",profile,") != std::string::npos};
  request.resume = args.get("resume");
  if (auto file = args.get("handle-file"); !file.empty()) {
    request.save_handle = [file](const std::string& handle) { return base::write_file_atomic(file, handle + "\n"); };
  }
  auto started = std::chrono::steady_clock::now();
  auto result = (*machine)->visit(request);
  if (!result) {
    return fail(result.error());
  }
  std::cout << "outcome: " << lab::to_string(result->outcome) << "\nmessage: " << result->message
            << "\nboot_id: " << result->boot_id << "\nconsole_log: " << result->console_log.string()
            << "\nseconds: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()
            << "\nruns: " << result->runs.size() << "\n";
  for (const auto& run : result->runs) {
    std::cout << "run" << run.index << ".ok: " << (run.ok ? 1 : 0) << "\n";
    for (const auto& [name, value] : run.metrics) {
      std::cout << "run" << run.index << "." << name << ": " << value << "\n";
    }
  }
  return 0;
}
