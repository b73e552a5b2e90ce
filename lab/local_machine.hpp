#pragma once
// Backend `local`: no install, no boot; runs the benchmark on this host in the artifact directory.
// For userspace builds (and the tests): every visit is a fresh "boot" id, so runs of different
// visits are never treated as sharing one boot's offset.

#include "lab/machine.hpp"

namespace bisectd::lab {

class LocalMachine : public Machine {
public:
  // Error: `spec` has settings (the local backend takes none).
  static Result<std::unique_ptr<Machine>> create(const MachineSpec& spec);

  explicit LocalMachine(MachineSpec spec);

  [[nodiscard]] const MachineSpec& spec() const override { return m_spec; }

  // Runs request.run.command request.runs times with cwd = artifact_dir (a relative argv[0] with a
  // slash, like ./bench, is taken from the artifact dir), each run with its own timeout and log file
  // in log_dir. A run is ok when it exits 0 and prints the primary metric. Cancel stops between or
  // during runs: outcome infra, the runs completed so far are kept. Errors: an invalid request.
  Result<VisitResult> visit(const VisitRequest& request) override;

private:
  [[nodiscard]] std::string next_boot_id() const;
  RunResult run_once(const VisitRequest& request, const std::string& boot_id, int index, bool& cancelled);

  MachineSpec m_spec;
};

} // namespace bisectd::lab
