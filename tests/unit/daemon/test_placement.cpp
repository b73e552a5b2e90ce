// Requests no machine can take: the reasons (pinned to a missing or quarantined machine, a group without machines
// or with all of them quarantined), what a bisection waits for, and the timeout, which starts over when the request
// becomes placeable again.
#include "daemon/run/placement.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using daemon::MachineInfo;
using daemon::run::PlacementWatch;
using daemon::unplaceable_reason;

namespace {

MachineInfo machine(const std::string& name, const std::string& group, bool quarantined = false) {
  MachineInfo m;
  m.name = name;
  m.group = group;
  m.quarantined = quarantined;
  m.quarantine_reason = quarantined ? "infra: ssh: connection refused" : "";
  return m;
}

storage::RequestRow request(std::int64_t id, const std::string& group, const std::string& pin = "") {
  storage::RequestRow r;
  r.id = id;
  r.machine_group = group;
  r.pin_machine = pin;
  return r;
}

} // namespace

TEST_CASE("placement: a request some machine can take has no reason, busy or not", "[daemon][placement]") {
  std::vector<MachineInfo> lab{machine("a", "x86"), machine("b", "x86", true)};
  lab[0].busy = true;
  CHECK_FALSE(unplaceable_reason(request(1, "x86"), lab));
  CHECK_FALSE(unplaceable_reason(request(2, "x86", "a"), lab));
}

TEST_CASE("placement: each way a request cannot be placed is named", "[daemon][placement]") {
  std::vector<MachineInfo> lab{machine("a", "x86", true), machine("b", "x86", true), machine("c", "arm")};
  CHECK(unplaceable_reason(request(1, "riscv"), lab) ==
        std::optional<std::string>("no machine is in group 'riscv' (groups: arm, x86)"));
  CHECK(unplaceable_reason(request(2, "x86"), lab) ==
        std::optional<std::string>("every machine of group 'x86' is in quarantine: a (infra: ssh: connection refused); "
                                   "b (infra: ssh: connection refused)"));
  CHECK(unplaceable_reason(request(3, "x86", "gone"), lab) ==
        std::optional<std::string>("pinned to machine 'gone', which the lab does not have"));
  CHECK(unplaceable_reason(request(4, "arm", "a"), lab) ==
        std::optional<std::string>("pinned to machine a (infra: ssh: connection refused), which is in quarantine"));
}

TEST_CASE("placement: a bisection waits for its first queued request no machine can take", "[daemon][placement]") {
  std::vector<MachineInfo> lab{machine("a", "x86", true), machine("c", "arm")};
  auto running = request(1, "riscv");
  running.state = storage::RequestState::running; // on its way: not what the bisection waits for
  CHECK_FALSE(daemon::waiting_for({running, request(2, "arm")}, lab));
  CHECK(daemon::waiting_for({running, request(2, "arm"), request(3, "x86")}, lab) ==
        std::optional<std::string>("every machine of group 'x86' is in quarantine: a (infra: ssh: connection refused)"));
}

TEST_CASE("placement: a request is due only after the timeout, counted from when it became unplaceable",
          "[daemon][placement]") {
  PlacementWatch watch(std::chrono::seconds(600));
  std::vector<MachineInfo> quarantined{machine("a", "x86", true)};
  std::vector<MachineInfo> released{machine("a", "x86")};
  std::vector<storage::RequestRow> queued{request(7, "x86")};
  CHECK(watch.due(queued, quarantined, 1000).empty());
  CHECK(watch.due(queued, quarantined, 1599).empty());
  auto due = watch.due(queued, quarantined, 1600);
  REQUIRE(due.size() == 1);
  CHECK(due[0].request.id == 7);
  CHECK(due[0].reason ==
        "every machine of group 'x86' is in quarantine: a (infra: ssh: connection refused) for 10m");

  PlacementWatch again(std::chrono::seconds(600));
  CHECK(again.due(queued, quarantined, 1000).empty());
  CHECK(again.due(queued, released, 1300).empty()); // released: the clock starts over
  CHECK(again.due(queued, quarantined, 1400).empty());
  CHECK(again.due(queued, quarantined, 1999).empty());
  CHECK(again.due(queued, quarantined, 2000).size() == 1);
  CHECK(again.due({}, quarantined, 2001).empty()); // left the queue
}
