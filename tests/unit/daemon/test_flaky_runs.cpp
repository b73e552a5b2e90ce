// A failure is evidence, not a verdict (issue 30, item 2): a run that timed out is retried like infra and never
// flags the commit; the commit's own failure (benchmark, build, boot) skips it only when a second attempt fails the
// same way; the flags name the job's definition, so a changed job starts clean.

#include "base/clock.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/run/retry_policy.hpp"
#include "daemon/run/visit_runner.hpp"
#include "runner_fixture.hpp"

#include <catch2/catch.hpp>

#include <deque>

using namespace bisectd;
using namespace bisectd::test;
using daemon::run::RequestOutcome;
using storage::CommitFlag;
using storage::RequestState;

namespace {

// How one visit of the scripted machine goes.
enum class Visit { ok, timed_out, benchmark_failed, boot_failed };

// A machine that plays its script, one entry per visit (ok once the script is over).
class ScriptedMachine final : public lab::Machine {
public:
  explicit ScriptedMachine(std::deque<Visit> script) : m_script(std::move(script)) {
    m_spec.name = "m0";
    m_spec.group = "local";
  }
  [[nodiscard]] const lab::MachineSpec& spec() const override { return m_spec; }
  Result<lab::VisitResult> visit(const lab::VisitRequest& request) override {
    auto how = m_script.empty() ? Visit::ok : m_script.front();
    if (!m_script.empty()) {
      m_script.pop_front();
    }
    lab::VisitResult result;
    result.boot_id = "boot" + std::to_string(++visits);
    if (how == Visit::boot_failed) {
      result.outcome = lab::VisitOutcome::boot_failed;
      result.message = "kernel crashed: Oops";
      return result;
    }
    for (int i = 0; i < request.runs; ++i) {
      lab::RunResult run;
      run.index = i;
      run.ok = how == Visit::ok;
      run.timed_out = how == Visit::timed_out;
      run.error = how == Visit::timed_out ? "benchmark timed out after 2.0s" : "benchmark exit 3";
      if (run.ok) {
        run.metrics[request.run.primary] = 100.0 + i;
      }
      result.runs.push_back(run);
    }
    return result;
  }
  int visits = 0;

private:
  std::deque<Visit> m_script;
  lab::MachineSpec m_spec;
};

// A builder that fails every build it makes and stores the failure, as the real builders do (a stored build is
// reused, not built again).
class FailingBuilder final : public kbuild::Builder {
public:
  explicit FailingBuilder(kbuild::BuildStore& store) : m_store(store) {}
  Result<kbuild::BuildResult> build(const kbuild::BuildRequest& request) override {
    BISECTD_TRY_ASSIGN(auto hash, request.recipe.hash());
    if (auto stored = m_store.lookup(request.commit, hash)) {
      return *stored;
    }
    ++builds;
    kbuild::BuildResult failed;
    failed.outcome = kbuild::BuildOutcome::failed;
    failed.message = "make: *** [Makefile:3: bench] Error 1";
    BISECTD_TRY(m_store.prepare(request.commit, hash));
    BISECTD_TRY(m_store.save(request.commit, hash, failed));
    return failed;
  }
  int builds = 0;

private:
  kbuild::BuildStore& m_store;
};

struct FlakyFixture : RunnerFixture {
  std::shared_ptr<const daemon::Job> job = jobs.get("bench").value();

  // Claims the request (letting its back-off pass first) and runs it on `machine`.
  RequestOutcome run_once(daemon::run::VisitRunner& with, lab::Machine& on, std::int64_t id) {
    auto queued = store.request(id).value();
    REQUIRE(queued->state == RequestState::queued);
    if (queued->retry_at != 0) {
      REQUIRE(store.fail_request(id, queued->error_code, queued->error, 0)); // the test does not wait
    }
    auto claimed = store.claim_request("local", "m0").value();
    REQUIRE(claimed);
    return with.run(on, *claimed);
  }
  std::int64_t enqueue(const std::string& commit) {
    return store.enqueue(daemon::make_request(*job, "demo", commit, storage::Purpose::bisect, 3)).value();
  }
  storage::CommitFlags flags(const std::string& commit) { return store.flags(daemon::flag_key(*job, commit)).value(); }
};

} // namespace

TEST_CASE("flaky runs: a visit whose runs timed out is retried like infra and never flags the commit",
          "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::timed_out});
  auto id = fx.enqueue(fx.line[1]);
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::requeued);
  auto row = fx.store.request(id).value();
  CHECK(row->error_code == "timeout");
  CHECK(row->retry_at >= base::unix_now() + 25); // infra's back-off (30 s), not the quick second look
  CHECK(fx.flags(fx.line[1]).unrunnable == 0);
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::done); // the box recovered
  CHECK(fx.store.samples("bench", {fx.line[1]}).value().size() == 3);
  CHECK_FALSE(fx.flags(fx.line[1]).is_skipped());
}

TEST_CASE("flaky runs: runs that keep timing out are bounded, then skipped as infra", "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::timed_out, Visit::timed_out, Visit::timed_out, Visit::timed_out});
  auto id = fx.enqueue(fx.line[1]);
  for (int attempt = 1; attempt < daemon::run::k_max_attempts; ++attempt) {
    CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::requeued);
  }
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::failed);
  auto flags = fx.flags(fx.line[1]);
  CHECK(flags.unrunnable == 0);
  CHECK(flags.infra == 1);
  CHECK(flags.is_skipped());
  CHECK(machine.visits == daemon::run::k_max_attempts);
}

TEST_CASE("flaky runs: a benchmark that fails once is tried again soon; the same failure twice skips the commit",
          "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::benchmark_failed, Visit::benchmark_failed});
  auto id = fx.enqueue(fx.line[1]);
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::requeued);
  auto row = fx.store.request(id).value();
  CHECK(row->error_code == "benchmark_failed");
  CHECK(row->retry_at <= base::unix_now() + daemon::run::k_confirm_delay.count());
  CHECK(row->error.find("failure 1 of 2") != std::string::npos);
  CHECK(fx.flags(fx.line[1]).unrunnable == 1);
  CHECK_FALSE(fx.flags(fx.line[1]).is_skipped()); // once is evidence, not a verdict
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::failed);
  CHECK(fx.flags(fx.line[1]).unrunnable == 2);
  CHECK(fx.flags(fx.line[1]).is_skipped());
  auto flagged = fx.store.commit_flags(fx.line[1]).value();
  REQUIRE(flagged.size() == 1);
  CHECK(flagged[0].message == "run 0: benchmark exit 3"); // the reason `results` shows
}

TEST_CASE("flaky runs: a benchmark that fails once and then works is measured, not skipped", "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::benchmark_failed});
  auto id = fx.enqueue(fx.line[1]);
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::requeued);
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::done);
  CHECK_FALSE(fx.flags(fx.line[1]).is_skipped());
  CHECK(machine.visits == 2);
}

TEST_CASE("flaky runs: a success forgets an earlier single failure; one much later does not add up with it",
          "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::benchmark_failed, Visit::ok, Visit::benchmark_failed});
  auto first = fx.enqueue(fx.line[1]);
  CHECK(fx.run_once(fx.runner, machine, first) == RequestOutcome::requeued);
  CHECK(fx.flags(fx.line[1]).unrunnable == 1);
  CHECK(fx.run_once(fx.runner, machine, first) == RequestOutcome::done);
  CHECK(fx.flags(fx.line[1]).unrunnable == 0);
  auto later = fx.enqueue(fx.line[1]); // weeks later, another bisection: one failure again
  CHECK(fx.run_once(fx.runner, machine, later) == RequestOutcome::requeued);
  CHECK(fx.flags(fx.line[1]).unrunnable == 1);
  CHECK_FALSE(fx.flags(fx.line[1]).is_skipped());
}

TEST_CASE("flaky runs: a kernel that fails to boot once is booted again soon", "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::boot_failed});
  auto id = fx.enqueue(fx.line[1]);
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::requeued);
  CHECK(fx.store.request(id).value()->retry_at <= base::unix_now() + daemon::run::k_confirm_delay.count());
  CHECK(fx.run_once(fx.runner, machine, id) == RequestOutcome::done);
  CHECK_FALSE(fx.flags(fx.line[1]).is_skipped());
}

TEST_CASE("flaky runs: a build that failed once is built again; the second failure skips the commit", "[daemon][run]") {
  FlakyFixture fx;
  FailingBuilder failing(fx.build_store);
  daemon::run::Builds builds{fx.trees, fx.build_store, fx.store, fx.costs, {failing, failing}};
  daemon::run::VisitRunner runner{fx.store, fx.store, fx.jobs, builds, fx.costs, fx.tmp.path(), fx.stopping, nullptr};
  ScriptedMachine machine({});
  auto id = fx.enqueue(fx.line[1]);
  CHECK(fx.run_once(runner, machine, id) == RequestOutcome::requeued);
  CHECK(fx.store.request(id).value()->error_code == "build_failed");
  CHECK_FALSE(fx.flags(fx.line[1]).is_skipped());
  CHECK(fx.run_once(runner, machine, id) == RequestOutcome::failed);
  CHECK(failing.builds == 2); // the stored failure was not taken as the second one
  CHECK(fx.flags(fx.line[1]).is_skipped());
  // Once a verdict, the stored failure stands: a later request does not build it a third time.
  auto later = fx.enqueue(fx.line[1]);
  CHECK(fx.run_once(runner, machine, later) == RequestOutcome::failed);
  CHECK(failing.builds == 2);
  CHECK(machine.visits == 0);
}

TEST_CASE("flaky runs: the flags name the job's definition; a changed job starts clean", "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::benchmark_failed, Visit::benchmark_failed});
  auto id = fx.enqueue(fx.line[1]);
  fx.run_once(fx.runner, machine, id);
  fx.run_once(fx.runner, machine, id);
  REQUIRE(fx.flags(fx.line[1]).is_skipped());
  auto fixed = *fx.job;
  fixed.yaml += "# the benchmark's argument fixed\n";
  CHECK(daemon::job_definition(fixed) != daemon::job_definition(*fx.job));
  CHECK_FALSE(fx.store.flags(daemon::flag_key(fixed, fx.line[1])).value().is_skipped());
}

TEST_CASE("flaky runs: the second attempt goes to another machine of the group at once, the same one waits",
          "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::benchmark_failed});
  auto id = fx.enqueue(fx.line[1]);
  auto first = fx.store.claim_request("local", "m0").value();
  REQUIRE(first);
  CHECK(fx.runner.run(machine, *first) == RequestOutcome::requeued);
  CHECK_FALSE(fx.store.claim_request("local", "m0").value()); // the machine that failed waits k_confirm_delay
  auto elsewhere = fx.store.claim_request("local", "m1").value();
  REQUIRE(elsewhere);
  CHECK(elsewhere->id == id);
}

TEST_CASE("flaky runs: a timeout's retry waits its back-off on every machine", "[daemon][run]") {
  FlakyFixture fx;
  ScriptedMachine machine({Visit::timed_out});
  fx.enqueue(fx.line[1]);
  auto first = fx.store.claim_request("local", "m0").value();
  REQUIRE(first);
  CHECK(fx.runner.run(machine, *first) == RequestOutcome::requeued);
  CHECK_FALSE(fx.store.claim_request("local", "m0").value());
  CHECK_FALSE(fx.store.claim_request("local", "m1").value()); // lab trouble: let it pass first
}
