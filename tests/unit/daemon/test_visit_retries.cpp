// Every retry is bounded: the visit runner's failures back off and end; a request that keeps failing skips its
// commit and never holds up the others.
#include "daemon/core/requests.hpp"
#include "daemon/run/retry_policy.hpp"
#include "daemon/run/visit_runner.hpp"
#include "fakes/fake_repo.hpp"
#include "runner_fixture.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace bisectd;
using namespace bisectd::test;
using daemon::run::after_failure;
using storage::RequestState;

namespace {

// A machine whose every visit takes at least k_visit_time, then fails (or throws), and counts its visits.
constexpr auto k_visit_time = std::chrono::milliseconds(20);
class BrokenMachine final : public lab::Machine {
public:
  explicit BrokenMachine(bool throws) : m_throws(throws) {
    m_spec.name = "m0";
    m_spec.group = "local";
  }
  [[nodiscard]] const lab::MachineSpec& spec() const override { return m_spec; }
  Result<lab::VisitResult> visit(const lab::VisitRequest&) override {
    ++visits;
    std::this_thread::sleep_for(k_visit_time);
    if (m_throws) {
      throw std::runtime_error("metric name is not UTF-8");
    }
    lab::VisitResult result;
    result.outcome = lab::VisitOutcome::infra;
    result.message = "machine unreachable";
    return result;
  }
  int visits = 0;

private:
  bool m_throws;
  lab::MachineSpec m_spec;
};

storage::RequestRow claimed(int attempts) {
  storage::RequestRow r;
  r.attempts = attempts;
  return r;
}

} // namespace

TEST_CASE("retry policy: retryable failures back off and end; others end at once", "[daemon][run]") {
  using daemon::run::FailureKind;
  auto first = after_failure(claimed(1), FailureKind::passing, false);
  REQUIRE(first.retry_after);
  CHECK(first.retry_after->count() == 30);
  CHECK(after_failure(claimed(2), FailureKind::passing, false).retry_after->count() == 60);
  auto last = after_failure(claimed(daemon::run::k_max_attempts), FailureKind::passing, false);
  CHECK_FALSE(last.retry_after);
  CHECK(last.flag_commit);
  auto permanent = after_failure(claimed(1), FailureKind::final, false);
  CHECK_FALSE(permanent.retry_after);
  CHECK_FALSE(permanent.flag_commit);
  CHECK(after_failure(claimed(9), FailureKind::passing, true).retry_after->count() == 0); // a stop: redone at once
  CHECK(daemon::run::retry_backoff(100).count() == 30 * 60);
}

TEST_CASE("visit runner: a request that keeps failing is retried a bounded number of times", "[daemon][run]") {
  for (bool throws : {false, true}) {
    INFO("throws: " << throws);
    RunnerFixture fx;
    auto& store = fx.store;
    auto& line = fx.line;
    auto& jobs = fx.jobs;
    auto poison = daemon::make_request(*jobs.get("bench").value(), "demo", line[1], storage::Purpose::bisect, 3);
    auto poison_id = store.enqueue(poison).value();
    BrokenMachine machine(throws);
    int claims = 0;
    for (int round = 0; round < 20; ++round) {
      auto request = store.claim_request("local", "m0").value();
      if (!request) {
        // Backing off: let the retry time pass (the test does not wait).
        auto queued = store.request(poison_id).value();
        if (queued->state != RequestState::queued) {
          break;
        }
        REQUIRE(store.fail_request(poison_id, queued->error_code, queued->error, 0));
        continue;
      }
      ++claims;
      fx.runner.run(machine, *request);
    }
    CHECK(claims == daemon::run::k_max_attempts);
    auto final = store.request(poison_id).value();
    CHECK(final->state == RequestState::failed);
    CHECK(final->error.find("skipped") != std::string::npos);
    CHECK(store.flags(daemon::flag_key(*jobs.get("bench").value(), line[1])).value().is_skipped()); // the engine will not ask for it again
    if (!throws) { // every failed visit held the machine: its wall time is the request's machine time
      CHECK(final->machine_seconds >= claims * std::chrono::duration<double>(k_visit_time).count());
    }
    auto retried = store.all_requests();
    CHECK(retried.size() == 1);
  }
}

TEST_CASE("queue: a failing request yields to fresh ones and nothing of a removed tree is claimed", "[daemon][run]") {
  MemoryStore store;
  storage::TreeRow tree;
  tree.name = "demo";
  REQUIRE(store.add_tree(tree, storage::JobRow{"bench", "bench.yaml", "", 0}));
  storage::RequestRow r;
  r.tree = "demo";
  r.job = "bench";
  r.machine_group = "local";
  r.commit = "old";
  auto old_id = store.enqueue(r).value();
  REQUIRE(store.claim_request("local", "m0").value()->id == old_id);
  REQUIRE(store.fail_request(old_id, "infra", "lab down", 0)); // due again now, but it failed once
  r.commit = "new";
  auto new_id = store.enqueue(r).value();
  CHECK(store.claim_request("local", "m0").value()->id == new_id); // fresh work first
  CHECK(store.claim_request("local", "m0").value()->id == old_id);
  r.commit = "later";
  store.enqueue(r).value();
  REQUIRE(store.remove_tree("demo"));
  CHECK_FALSE(store.claim_request("local", "m0").value());
}

namespace {

// The memory store as a QueueStore whose first `refusals` fail_request calls fail, as a full disk makes them.
class RefusingQueue final : public storage::QueueStore {
public:
  RefusingQueue(MemoryStore& store, int refusals) : m_store(store), m_refusals(refusals) {}
  Status fail_request(std::int64_t id, const std::string& code, const std::string& message,
                      std::optional<std::int64_t> retry_at, const std::string& elsewhere_than = "") override {
    ++calls;
    if (m_refusals-- > 0) {
      return make_error(ErrorCode::io, "database or disk is full");
    }
    return m_store.fail_request(id, code, message, retry_at, elsewhere_than);
  }
  Result<std::int64_t> enqueue(const storage::RequestRow& r) override { return m_store.enqueue(r); }
  Result<std::optional<storage::RequestRow>> claim_request(const std::string& g, const std::string& m) override {
    return m_store.claim_request(g, m);
  }
  Status set_request_state(std::int64_t id, RequestState s) override { return m_store.set_request_state(id, s); }
  Status set_lab_handle(std::int64_t id, const std::string& h) override { return m_store.set_lab_handle(id, h); }
  Status add_machine_time(std::int64_t id, double s) override { return m_store.add_machine_time(id, s); }
  Status requeue_request(std::int64_t id, const std::string& m) override { return m_store.requeue_request(id, m); }
  Status finish_request(std::int64_t id, const std::vector<storage::SampleRow>& s) override {
    return m_store.finish_request(id, s);
  }
  Result<std::pair<int, int>> requeue_interrupted(int n) override { return m_store.requeue_interrupted(n); }
  Result<std::int64_t> failed_requests_for(const std::string& j, const std::string& c, storage::Purpose p) override {
    return m_store.failed_requests_for(j, c, p);
  }
  Result<std::optional<storage::RequestRow>> last_failed_request(const std::string& j, const std::string& c,
                                                                 storage::Purpose p) override {
    return m_store.last_failed_request(j, c, p);
  }
  Result<std::vector<storage::RequestRow>> requests_for_bisection(std::int64_t id) override {
    return m_store.requests_for_bisection(id);
  }
  Result<std::vector<storage::RequestRow>> requests_for_detection(std::int64_t id) override {
    return m_store.requests_for_detection(id);
  }
  Result<std::vector<storage::RequestRow>> queued_requests() override { return m_store.queued_requests(); }
  Result<std::vector<storage::RequestRow>> open_requests() override { return m_store.open_requests(); }
  Result<std::optional<storage::RequestRow>> request(std::int64_t id) override { return m_store.request(id); }
  Result<std::int64_t> open_requests_for(const std::string& j, const std::string& c) override {
    return m_store.open_requests_for(j, c);
  }
  Result<std::map<std::string, std::int64_t>> request_counts() override { return m_store.request_counts(); }
  Result<std::vector<std::string>> watched_commits(const std::string& t, const std::string& j, const std::string& g,
                                                   std::size_t n) override {
    return m_store.watched_commits(t, j, g, n);
  }
  Result<bool> is_watched(const std::string& t, const std::string& j, const std::string& g,
                          const std::string& c) override {
    return m_store.is_watched(t, j, g, c);
  }
  int calls = 0;

private:
  MemoryStore& m_store;
  int m_refusals;
};

} // namespace

TEST_CASE("retry policy: a refused store write is tried again, backing off, within a budget", "[daemon][run]") {
  using std::chrono::milliseconds;
  CHECK(daemon::run::store_retry_wait(1, milliseconds(0)) == milliseconds(500));
  CHECK(daemon::run::store_retry_wait(2, milliseconds(500)) == milliseconds(1000));
  CHECK(daemon::run::store_retry_wait(20, milliseconds(0)) == milliseconds(30'000));
  CHECK_FALSE(daemon::run::store_retry_wait(3, daemon::run::k_store_retry_budget));
}

TEST_CASE("visit runner: a failure the store refuses is stored once the store takes it", "[daemon][run]") {
  // Left "building" in the store, the request would hold up its bisection until the next restart.
  RunnerFixture fx;
  RefusingQueue queue(fx.store, 2);
  daemon::run::VisitRunner runner{queue, fx.store, fx.jobs, fx.builds, fx.costs, fx.tmp.path(), fx.stopping, nullptr};
  auto request = daemon::make_request(*fx.jobs.get("bench").value(), "demo", fx.line[1], storage::Purpose::bisect, 3);
  auto id = fx.store.enqueue(request).value();
  BrokenMachine machine(false);
  auto claimed = fx.store.claim_request("local", "m0").value();
  REQUIRE(claimed);
  runner.run(machine, *claimed);
  CHECK(queue.calls == 3);
  auto stored = fx.store.request(id).value();
  CHECK(stored->state == RequestState::queued); // back in the queue for its retry, not stuck "building"
  CHECK(stored->error.find("machine unreachable") != std::string::npos);
}
