// A run that ran past its time limit is marked timed_out (issue 30, item 2): the daemon retries it like infra and
// never takes it, on its own, as a verdict on the commit. A benchmark that fails otherwise is not.

#include "lab/console.hpp"
#include "lab/local_machine.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

lab::VisitRequest request_in(const test::TempDir& tmp) {
  lab::VisitRequest req;
  req.commit = "c0ffee";
  req.artifact_dir = tmp.path() / "artifacts";
  req.log_dir = tmp.path() / "logs";
  req.runs = 1;
  req.run.command = {"./bench"};
  req.run.timeout = 1s;
  req.run.primary = "bench.ops_per_sec";
  return req;
}

lab::MachineSpec local_spec() {
  lab::MachineSpec spec;
  spec.name = "local1";
  spec.group = "local";
  spec.backend = "local";
  return spec;
}

} // namespace

TEST_CASE("lab::LocalMachine marks a benchmark killed at its timeout as timed_out, a failing one not", "[lab]") {
  test::TempDir tmp;
  lab::LocalMachine machine(local_spec());
  tmp.write("artifacts/bench", "#!/bin/sh\necho 'bench: warming up'\nexec sleep 30\n", true);
  auto hung = machine.visit(request_in(tmp));
  REQUIRE(hung);
  REQUIRE(hung->runs.size() == 1);
  CHECK_FALSE(hung->runs[0].ok);
  CHECK(hung->runs[0].timed_out);
  CHECK(hung->runs[0].error.find("timed out") != std::string::npos);

  tmp.write("artifacts/bench", "#!/bin/sh\necho 'bench: cannot map the test file' >&2\nexit 3\n", true);
  auto failed = machine.visit(request_in(tmp));
  REQUIRE(failed);
  CHECK_FALSE(failed->runs[0].ok);
  CHECK_FALSE(failed->runs[0].timed_out);
}

TEST_CASE("lab::run_result: a guest's run killed by /init's timeout, or without an end marker, timed out", "[lab]") {
  test::TempDir tmp;
  auto req = request_in(tmp);
  lab::ConsoleRun killed;
  killed.ended = true;
  killed.exit_code = 137; // `timeout -s KILL` in /init
  CHECK(lab::run_result(killed, req, "b1", "qemu").timed_out);
  lab::ConsoleRun silent; // the guest stopped answering mid-run
  silent.ended = false;
  CHECK(lab::run_result(silent, req, "b1", "qemu").timed_out);
  lab::ConsoleRun failed;
  failed.ended = true;
  failed.exit_code = 3;
  CHECK_FALSE(lab::run_result(failed, req, "b1", "qemu").timed_out);
  lab::ConsoleRun ok;
  ok.ended = true;
  ok.exit_code = 0;
  ok.output = "bench.ops_per_sec: 100\n";
  auto measured = lab::run_result(ok, req, "b1", "qemu");
  CHECK(measured.ok);
  CHECK_FALSE(measured.timed_out);
}
