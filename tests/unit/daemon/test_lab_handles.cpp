// A visit that lives in the lab (a LAVA job): its handle is stored before it waits, a restarted daemon resumes it
// on the same machine and never starts a second one, the handle is cleared at the end, and a visit the lab
// withdrew goes back to the queue without using an attempt.
#include "daemon/core/requests.hpp"
#include "daemon/run/visit_runner.hpp"
#include "fakes/fake_repo.hpp"
#include "runner_fixture.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::test;
using storage::RequestState;

namespace {

// Saves handle "job-N" (N = its visits), then ends with `outcome`; records what it was asked to resume.
class HandleMachine final : public lab::Machine {
public:
  explicit HandleMachine(std::string name) {
    m_spec.name = std::move(name);
    m_spec.group = "local";
  }
  [[nodiscard]] const lab::MachineSpec& spec() const override { return m_spec; }
  Result<lab::VisitResult> visit(const lab::VisitRequest& request) override {
    resumed.push_back(request.resume);
    metadata = request.metadata;
    if (request.resume.empty()) {
      ++submitted;
      BISECTD_TRY(request.save_handle("job-" + std::to_string(submitted)));
    }
    if (on_visit) {
      on_visit();
    }
    lab::VisitResult result;
    result.outcome = outcome;
    result.message = "withdrawn";
    return result;
  }
  lab::VisitOutcome outcome = lab::VisitOutcome::cancelled;
  std::function<void()> on_visit;
  std::vector<std::string> resumed;
  std::map<std::string, std::string> metadata;
  int submitted = 0;

private:
  lab::MachineSpec m_spec;
};

struct Fixture : RunnerFixture {
  std::int64_t id = 0;

  Fixture() {
    id = store.enqueue(daemon::make_request(*jobs.get("bench").value(), "demo", line[1], storage::Purpose::bisect, 3))
           .value();
  }
};

} // namespace

TEST_CASE("visit runner: a lab-withdrawn visit is requeued without using an attempt", "[daemon][run][lava]") {
  Fixture fx;
  HandleMachine machine("lava1");
  auto request = fx.store.claim_request("local", "lava1").value();
  REQUIRE(request);
  CHECK(fx.runner.run(machine, *request) == daemon::run::RequestOutcome::requeued);
  auto row = fx.store.request(fx.id).value();
  CHECK(row->state == RequestState::queued);
  CHECK(row->attempts == 0);
  CHECK(row->lab_handle.empty());
  CHECK(machine.metadata.at("request") == std::to_string(fx.id));
}

TEST_CASE("visit runner: a daemon stop keeps the handle; the restart resumes it on the same machine",
          "[daemon][run][lava]") {
  Fixture fx;
  HandleMachine lava1("lava1");
  HandleMachine lava2("lava2");
  lava1.on_visit = [&] { fx.stopping = true; }; // the daemon stops while the job runs
  auto request = fx.store.claim_request("local", "lava1").value();
  REQUIRE(request);
  fx.runner.run(lava1, *request);
  CHECK(fx.store.request(fx.id).value()->lab_handle == "job-1");
  // the restart
  fx.stopping = false;
  REQUIRE(fx.store.requeue_interrupted(5));
  auto row = fx.store.request(fx.id).value();
  if (row->state != RequestState::queued) {
    REQUIRE(fx.store.fail_request(fx.id, "cancelled", "daemon stopping", 0));
  }
  CHECK_FALSE(fx.store.claim_request("local", "lava2").value()); // only its machine follows that job
  auto again = fx.store.claim_request("local", "lava1").value();
  REQUIRE(again);
  CHECK(again->lab_handle == "job-1");
  lava1.on_visit = nullptr;
  lava1.outcome = lab::VisitOutcome::infra;
  fx.runner.run(lava1, *again);
  CHECK(lava1.resumed == std::vector<std::string>{"", "job-1"});
  CHECK(lava1.submitted == 1);                                // followed, not submitted again
  CHECK(fx.store.request(fx.id).value()->lab_handle.empty()); // cleared at the end
}
