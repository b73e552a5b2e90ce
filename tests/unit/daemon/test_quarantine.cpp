// Quarantine: consecutive infra visits on one machine take it out of service until released; its state is stored.
#include "daemon/core/lab_view.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/run/machine_slots.hpp"
#include "daemon/run/quarantine.hpp"
#include "daemon/run/visit_runner.hpp"
#include "fakes/daemon_fakes.hpp"
#include "fakes/fake_repo.hpp"
#include "runner_fixture.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::daemon;

namespace {

class RecordingStore final : public storage::MachineStore {
public:
  std::map<std::string, storage::MachineStateRow> rows;
  int writes = 0;
  Result<std::vector<storage::MachineStateRow>> machine_states() override {
    std::vector<storage::MachineStateRow> out;
    for (const auto& [name, row] : rows) {
      out.push_back(row);
    }
    return out;
  }
  Status put_machine_state(const storage::MachineStateRow& state) override {
    rows[state.name] = state;
    ++writes;
    return {};
  }
};

class NamedMachine final : public lab::Machine {
public:
  explicit NamedMachine(std::string name, std::string group = "boxes") {
    m_spec.name = std::move(name);
    m_spec.group = std::move(group);
  }
  [[nodiscard]] const lab::MachineSpec& spec() const override { return m_spec; }
  Result<lab::VisitResult> visit(const lab::VisitRequest&) override {
    ++visits;
    lab::VisitResult result;
    if (hangs) { // boots, then every run times out
      for (int i = 0; i < 2; ++i) {
        lab::RunResult run;
        run.index = i;
        run.timed_out = true;
        run.error = "timed out after 60s";
        result.runs.push_back(run);
      }
      return result;
    }
    result.outcome = lab::VisitOutcome::infra;
    result.message = "ssh " + m_spec.name + ": unreachable: Connection refused";
    return result;
  }
  int visits = 0;
  bool hangs = false;
  [[nodiscard]] int quarantine_after() const override { return 2; }

private:
  lab::MachineSpec m_spec;
};

} // namespace

TEST_CASE("quarantine: consecutive infra failures, reset by a working visit, released by the operator",
          "[daemon][quarantine]") {
  RecordingStore store;
  run::Quarantine q(&store);
  using lab::VisitOutcome;
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::infra, "ssh box-1: unreachable", 3));
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::ok, "", 3)); // the count starts again
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::infra, "a", 3));
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::boot_failed, "panic", 3)); // the box worked; the kernel did not
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::infra, "a", 3));
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::cancelled, "", 3)); // not counted either way
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::infra, "b", 3));
  CHECK_FALSE(q.quarantined("box-1"));
  CHECK(q.on_visit("box-1", VisitOutcome::infra, "ssh box-1: no ssh within 300s of the kexec", 3));
  CHECK(q.quarantined("box-1"));
  CHECK(q.reason("box-1") == "3 infra failures in a row, the last: ssh box-1: no ssh within 300s of the kexec");
  CHECK_FALSE(q.on_visit("box-1", VisitOutcome::infra, "c", 3)); // already quarantined
  CHECK(store.rows.at("box-1").quarantined);

  // Restarted daemon: the quarantine is still there.
  run::Quarantine again(&store);
  REQUIRE(again.load());
  CHECK(again.quarantined("box-1"));
  CHECK(again.release("box-1").value());
  CHECK_FALSE(again.quarantined("box-1"));
  CHECK_FALSE(store.rows.at("box-1").quarantined);
  CHECK(store.rows.at("box-1").consecutive_infra == 0);
  CHECK_FALSE(again.release("box-1").value()); // not quarantined any more
  CHECK_FALSE(again.release("nosuch").value());

  // threshold 0: never.
  for (int i = 0; i < 10; ++i) {
    CHECK_FALSE(q.on_visit("local", VisitOutcome::infra, "x", 0));
  }
  CHECK_FALSE(q.quarantined("local"));
}

TEST_CASE("quarantine: the lab view shows it and pins confirmations elsewhere", "[daemon][quarantine]") {
  std::vector<std::unique_ptr<lab::Machine>> machines;
  machines.push_back(std::make_unique<NamedMachine>("box-1"));
  machines.push_back(std::make_unique<NamedMachine>("box-2"));
  run::MachineSlots slots(std::move(machines));
  run::Quarantine q(nullptr);
  slots.set_quarantine(&q);
  CHECK(slots.first_in("boxes") == "box-1");
  q.on_visit("box-1", lab::VisitOutcome::infra, "x", slots.machine(0).quarantine_after());
  q.on_visit("box-1", lab::VisitOutcome::infra, "y", slots.machine(0).quarantine_after());
  CHECK(slots.quarantined(0));
  CHECK_FALSE(slots.quarantined(1));
  auto view = slots.machines();
  CHECK(view[0].quarantined);
  CHECK(view[0].quarantine_reason == "2 infra failures in a row, the last: y");
  CHECK_FALSE(view[1].quarantined);
  CHECK(slots.first_in("boxes") == "box-2");
  CHECK(slots.slot_of("box-2") == 1);
  CHECK(slots.slot_of("nosuch") == -1);
}

TEST_CASE("quarantine: the visit runner counts each visit's outcome on its machine", "[daemon][quarantine]") {
  test::RunnerFixture fx;
  run::Quarantine q(nullptr);
  fx.runner.set_quarantine(&q);
  auto& store = fx.store;
  auto& runner = fx.runner;
  auto request = daemon::make_request(*fx.jobs.get("bench").value(), "demo", fx.line[1], storage::Purpose::bisect, 3);
  store.enqueue(request).value();
  NamedMachine box("m0", "local"); // quarantine_after() == 2
  for (int i = 0; i < 2; ++i) {
    auto claimed = store.claim_request("local", "m0").value();
    REQUIRE(claimed);
    runner.run(box, *claimed);
    REQUIRE(store.fail_request(claimed->id, "infra", "x", 0)); // due again at once (the test does not wait)
  }
  CHECK(box.visits == 2);
  CHECK(q.quarantined("m0"));
  CHECK(q.reason("m0") == "2 infra failures in a row, the last: ssh m0: unreachable: Connection refused");
}

TEST_CASE("quarantine: a box whose runs time out on one commit after another is quarantined; one hanging commit "
          "is not",
          "[daemon][quarantine]") {
  RecordingStore store;
  run::Quarantine q(&store);
  for (int i = 0; i < 5; ++i) {
    CHECK_FALSE(q.on_timeouts("box-1", "c1", "timed out after 60s", 3)); // the commit's code may hang
  }
  CHECK_FALSE(q.on_visit("box-1", lab::VisitOutcome::ok, "", 3));
  CHECK_FALSE(q.on_timeouts("box-1", "c1", "timed out after 60s", 3));
  CHECK_FALSE(q.on_timeouts("box-1", "c2", "timed out after 60s", 3));
  CHECK_FALSE(q.on_timeouts("box-1", "c2", "timed out after 60s", 3));
  CHECK(q.on_timeouts("box-1", "c3", "timed out after 60s", 3));
  CHECK(q.reason("box-1") == "3 failures in a row, the last: every run timed out: timed out after 60s");
  CHECK(store.rows.at("box-1").quarantined);
}

TEST_CASE("quarantine: the visit runner counts a visit whose every run timed out against its machine",
          "[daemon][quarantine]") {
  test::RunnerFixture fx;
  fx.line = fx.trees.repo("demo").line("d", 3);
  run::Quarantine q(nullptr);
  fx.runner.set_quarantine(&q);
  NamedMachine box("m0", "local"); // quarantine_after() == 2
  box.hangs = true;
  auto visit = [&](const std::string& commit) {
    auto request = daemon::make_request(*fx.jobs.get("bench").value(), "demo", commit, storage::Purpose::bisect, 3);
    fx.store.enqueue(request).value();
    auto claimed = fx.store.claim_request("local", "m0").value();
    REQUIRE(claimed);
    fx.runner.run(box, *claimed);
  };
  visit(fx.line[1]);
  CHECK_FALSE(q.quarantined("m0"));
  visit(fx.line[2]);
  CHECK(box.visits == 2);
  CHECK(q.quarantined("m0"));
  CHECK(q.reason("m0") == "2 failures in a row, the last: every run timed out: timed out after 60s");
}
