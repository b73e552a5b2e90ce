// A run that meets a full file system is marked disk_full, whatever else went wrong (issue 29, item 6): the daemon
// then retries it as infra instead of judging the commit.

#include "base/fs.hpp"
#include "lab/local_machine.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

base::ExitStatus exited(int code) {
  base::ExitStatus status;
  status.code = code;
  return status;
}

lab::RunResult failed_run() {
  lab::RunResult run;
  run.error = "benchmark exit 1; no bench.ops_per_sec";
  run.log_path = "/data/logs/requests/7/b-run0.log";
  return run;
}

} // namespace

TEST_CASE("judge_disk_full: the daemon's log write failed with ENOSPC", "[lab]") {
  auto run = failed_run();
  auto status = exited(0);
  status.output_error = Error{ErrorCode::infra, "No space left on device"};
  lab::judge_disk_full(run, status, "");
  CHECK(run.disk_full);
  CHECK(run.error.starts_with("disk full: run log /data/logs/requests/7/b-run0.log: No space left on device"));
}

TEST_CASE("judge_disk_full: the failed benchmark said ENOSPC or EDQUOT", "[lab]") {
  for (const char* said : {"write: No space left on device", "open: Disk quota exceeded"}) {
    auto run = failed_run();
    lab::judge_disk_full(run, exited(1), std::string("bench starting\n") + said + "\n");
    CHECK(run.disk_full);
  }
  auto plain = failed_run();
  lab::judge_disk_full(plain, exited(1), "bench: assertion failed\n");
  CHECK_FALSE(plain.disk_full);
  auto io_error = failed_run();
  auto status = exited(1);
  status.output_error = Error{ErrorCode::io, "Input/output error"};
  lab::judge_disk_full(io_error, status, "");
  CHECK_FALSE(io_error.disk_full);
  auto ok = failed_run();
  ok.ok = true; // a run that gave its metric is kept even if a later write failed
  lab::judge_disk_full(ok, exited(0), "No space left on device");
  CHECK_FALSE(ok.disk_full);
}

TEST_CASE("lab::LocalMachine marks a benchmark that fails with ENOSPC as disk_full", "[lab]") {
  test::TempDir tmp;
  tmp.write("artifacts/bench", "#!/bin/sh\necho 'bench: write /tmp/scratch: No space left on device' >&2\nexit 1\n",
            true);
  lab::MachineSpec spec;
  spec.name = "local1";
  spec.group = "local";
  spec.backend = "local";
  lab::LocalMachine machine(spec);
  lab::VisitRequest req;
  req.commit = "c0ffee";
  req.artifact_dir = tmp.path() / "artifacts";
  req.log_dir = tmp.path() / "logs";
  req.runs = 2;
  req.run.command = {"./bench"};
  req.run.timeout = 10s;
  req.run.primary = "bench.ops_per_sec";
  auto visit = machine.visit(req);
  REQUIRE(visit);
  REQUIRE(visit->runs.size() == 2);
  for (const auto& run : visit->runs) {
    CHECK_FALSE(run.ok);
    CHECK(run.disk_full);
    CHECK(run.error.starts_with("disk full: the benchmark said so"));
  }
}
