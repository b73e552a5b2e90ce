// A visit whose runs all met a full disk is infra for the visit runner (issue 29, item 6): retried with back-off,
// bounded by k_max_attempts, and never judged `benchmark_failed` nor flagged unrunnable.

#include "daemon/core/requests.hpp"
#include "daemon/run/retry_policy.hpp"
#include "daemon/run/visit_runner.hpp"
#include "runner_fixture.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::test;
using storage::RequestState;

namespace {

// Every visit "runs" the benchmark and reports runs that failed on a full disk (or, `full` false, plainly failed).
class FullDiskMachine final : public lab::Machine {
public:
  explicit FullDiskMachine(bool full) : m_full(full) {
    m_spec.name = "m0";
    m_spec.group = "local";
  }
  [[nodiscard]] const lab::MachineSpec& spec() const override { return m_spec; }
  Result<lab::VisitResult> visit(const lab::VisitRequest& request) override {
    lab::VisitResult result;
    result.boot_id = "b" + std::to_string(++visits);
    for (int i = 0; i < request.runs; ++i) {
      lab::RunResult run;
      run.index = i;
      run.error = "benchmark exit 1; no " + request.run.primary;
      auto status = base::ExitStatus{};
      status.code = 1;
      lab::judge_disk_full(run, status, m_full ? "write: No space left on device\n" : "segfault\n");
      result.runs.push_back(run);
    }
    return result;
  }
  int visits = 0;

private:
  bool m_full;
  lab::MachineSpec m_spec;
};

} // namespace

TEST_CASE("visit runner: runs failing on a full disk are infra, retried and bounded, never a verdict",
          "[daemon][run]") {
  RunnerFixture fx;
  auto request = daemon::make_request(*fx.jobs.get("bench").value(), "demo", fx.line[1], storage::Purpose::bisect, 3);
  auto id = fx.store.enqueue(request).value();
  FullDiskMachine machine(true);
  auto claimed = fx.store.claim_request("local", "m0").value();
  REQUIRE(claimed);
  CHECK(fx.runner.run(machine, *claimed) == daemon::run::RequestOutcome::requeued);
  auto row = fx.store.request(id).value();
  CHECK(row->state == RequestState::queued);
  CHECK(row->error_code == "infra");
  CHECK(row->error.find("disk full") != std::string::npos);
  auto flags = fx.store.flags(daemon::flag_key(*fx.jobs.get("bench").value(), fx.line[1])).value();
  CHECK_FALSE(flags.is_skipped()); // no unrunnable flag: the commit is not judged
  // Bounded like every infra failure: the attempts run out, then it fails for good (flagged infra, not unrunnable).
  for (int round = 0; round < 10; ++round) {
    auto queued = fx.store.request(id).value();
    if (queued->state != RequestState::queued) {
      break;
    }
    REQUIRE(fx.store.fail_request(id, queued->error_code, queued->error, 0)); // let the back-off pass
    auto again = fx.store.claim_request("local", "m0").value();
    REQUIRE(again);
    fx.runner.run(machine, *again);
  }
  CHECK(machine.visits == daemon::run::k_max_attempts);
  auto final = fx.store.request(id).value();
  CHECK(final->state == RequestState::failed);
  CHECK(final->error_code == "infra");
  CHECK(fx.store.flags(daemon::flag_key(*fx.jobs.get("bench").value(), fx.line[1])).value().unrunnable == 0);
}

TEST_CASE("visit runner: runs failing otherwise are still benchmark_failed", "[daemon][run]") {
  RunnerFixture fx;
  auto request = daemon::make_request(*fx.jobs.get("bench").value(), "demo", fx.line[1], storage::Purpose::bisect, 3);
  auto id = fx.store.enqueue(request).value();
  FullDiskMachine machine(false);
  auto claimed = fx.store.claim_request("local", "m0").value();
  REQUIRE(claimed);
  // The commit's own failure: tried again on a new boot before it is a verdict (tests/unit/daemon/test_flaky_runs.cpp).
  CHECK(fx.runner.run(machine, *claimed) == daemon::run::RequestOutcome::requeued);
  CHECK(fx.store.request(id).value()->error_code == "benchmark_failed");
}
