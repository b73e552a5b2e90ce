// LavaMachine with a fake HTTP transport: submission, the job id stored before waiting, resume without a second
// submission, polling, timeouts, LAVA down, cancel, outcome mapping, slots.

#include "base/fs.hpp"
#include "lab/lava_machine.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <deque>
#include <mutex>
#include <thread>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

// Scripted answers by path prefix; records every call in order.
class FakeLavaHttp final : public lab::LavaHttp {
public:
  struct Script {
    std::deque<Result<lab::HttpResponse>> answers; // the last one repeats
  };

  Result<lab::HttpResponse> get(const std::string& path) override { return answer("GET " + path); }
  Result<lab::HttpResponse> post(const std::string& path, const std::string& body) override {
    {
      std::lock_guard lock(m_mutex);
      posted.push_back(body);
    }
    return answer("POST " + path);
  }

  void script(const std::string& call, std::vector<Result<lab::HttpResponse>> answers) {
    std::lock_guard lock(m_mutex);
    m_scripts[call].answers.assign(answers.begin(), answers.end());
  }

  std::vector<std::string> calls() {
    std::lock_guard lock(m_mutex);
    return m_calls;
  }
  int exact(const std::string& call) {
    int n = 0;
    for (const auto& c : calls()) {
      n += c == call ? 1 : 0;
    }
    return n;
  }
  int count(const std::string& prefix) {
    int n = 0;
    for (const auto& call : calls()) {
      n += call.rfind(prefix, 0) == 0 ? 1 : 0;
    }
    return n;
  }

  std::vector<std::string> posted;

private:
  Result<lab::HttpResponse> answer(const std::string& call) {
    std::lock_guard lock(m_mutex);
    m_calls.push_back(call);
    auto found = m_scripts.find(call);
    if (found == m_scripts.end() || found->second.answers.empty()) {
      return lab::HttpResponse{404, R"({"detail": "Not found."})"};
    }
    auto& answers = found->second.answers;
    auto front = answers.front();
    if (answers.size() > 1) {
      answers.pop_front();
    }
    return front;
  }

  std::mutex m_mutex;
  std::map<std::string, Script> m_scripts;
  std::vector<std::string> m_calls;
};

lab::HttpResponse ok(std::string body) { return {200, std::move(body)}; }
lab::HttpResponse job(const std::string& state, const std::string& health, const std::string& comment = "") {
  return ok(R"({"id": 7, "state": ")" + state + R"(", "health": ")" + health +
            R"(", "actual_device": "qemu01", "failure_comment": ")" + comment + "\"}");
}

std::string log_of(const std::vector<std::string>& console) {
  std::string out = R"(- {"dt": "2026-12-02T01:00:00", "lvl": "info", "msg": "start"})"
                    "\n";
  for (const auto& line : console) {
    out += R"(- {"dt": "2026-12-02T01:00:01", "lvl": "target", "msg": ")" + line + "\"}\n";
  }
  return out;
}

const std::vector<std::string> k_good_console{"Linux version 6.1.192-gabc (bisectd@bisectd)",
                                              "Run /init as init process",
                                              "BISECTD-BOOT release=6.1.192-gabc",
                                              "BISECTD-RUN-BEGIN 0",
                                              "page_fault.ops_per_sec: 1000",
                                              "BISECTD-RUN-END 0 rc=0 start=1.0 end=2.0",
                                              "BISECTD-RUN-BEGIN 1",
                                              "page_fault.ops_per_sec: 1010",
                                              "BISECTD-RUN-END 1 rc=0 start=2.0 end=3.0",
                                              "BISECTD-DONE"};

struct LavaFixture {
  test::TempDir tmp;
  FakeLavaHttp* http = nullptr;
  std::unique_ptr<lab::LavaMachine> machine;
  std::vector<std::string> saved;
  std::atomic<bool> cancel{false};

  explicit LavaFixture(std::function<void(lab::LavaSettings&)> adjust = {}) {
    auto bench = tmp.path() / "bench";
    std::filesystem::create_directories(bench);
    for (auto name : {"syscall", "page_fault", "pipe", "mmap"}) {
      REQUIRE(base::write_file_atomic(bench / name, "#!/bin/sh\n"));
    }
    REQUIRE(base::write_file_atomic(tmp.path() / "busybox", "busybox"));
    std::filesystem::create_directories(tmp.path() / "build");
    REQUIRE(base::write_file_atomic(tmp.path() / "build" / "bzImage", "kernel"));
    lab::LavaSettings settings;
    settings.url = "http://lava.test";
    settings.device_type = "qemu";
    settings.bench_dir = bench;
    settings.busybox = tmp.path() / "busybox";
    settings.cache_dir = tmp.path() / "cache";
    settings.queue_timeout = 2s;
    settings.unreachable_timeout = 1s;
    if (adjust) {
      adjust(settings);
    }
    lab::MachineSpec spec;
    spec.name = "lava1";
    spec.group = "lava";
    spec.backend = "lava";
    auto fake = std::make_unique<FakeLavaHttp>();
    http = fake.get();
    machine = std::make_unique<lab::LavaMachine>(spec, settings, std::move(fake),
                                                 lab::LavaPolling{1ms, 20ms, std::chrono::seconds(5)});
  }

  lab::VisitRequest request() {
    lab::VisitRequest r;
    r.commit = "abcdef0123456789";
    r.artifact_dir = tmp.path() / "build";
    r.kernel_release = "6.1.192-gabc";
    r.run.command = {"page_fault", "--seconds", "1"};
    r.run.primary = "page_fault.ops_per_sec";
    r.run.timeout = 10s;
    r.runs = 2;
    r.log_dir = tmp.path() / "logs";
    r.cancel = &cancel;
    r.metadata = {{"request", "12"}};
    r.save_handle = [this](const std::string& handle) -> Status {
      saved.push_back(handle);
      // the handle is stored before the machine asks for the job's state
      if (http->exact("GET jobs/7/") != 0) {
        return make_error(ErrorCode::generic, "saved too late");
      }
      return {};
    };
    return r;
  }

  void script_submission() { http->script("POST jobs/", {lab::HttpResponse{201, R"({"job_ids": [7]})"}}); }
};

} // namespace

TEST_CASE("lab::LavaMachine: one visit is one job, its id stored before waiting", "[lab][lava]") {
  LavaFixture fx;
  fx.script_submission();
  fx.http->script("GET jobs/7/", {job("Submitted", "Unknown"), job("Running", "Unknown"), job("Finished", "Complete")});
  fx.http->script("GET jobs/7/logs/", {ok(log_of(k_good_console))});
  auto visit = fx.machine->visit(fx.request());
  REQUIRE(visit);
  CHECK(visit->outcome == lab::VisitOutcome::ok);
  CHECK(fx.saved == std::vector<std::string>{"7"});
  CHECK(visit->boot_id == "lava1-lava-7");
  REQUIRE(visit->runs.size() == 2);
  CHECK(visit->runs[0].ok);
  CHECK(visit->runs[1].metrics.at("page_fault.ops_per_sec") == 1010);
  CHECK(base::read_file(visit->console_log).value_or("").find("BISECTD-DONE") != std::string::npos);
  REQUIRE(fx.http->posted.size() == 1);
  const auto& body = fx.http->posted[0];
  CHECK(body.find("file://" + (fx.tmp.path() / "build" / "bzImage").string()) != std::string::npos);
  CHECK(body.find(R"(\"request\": \"12\")") != std::string::npos);
  // the visit's initramfs is removed once the job is done
  for (const auto& entry : std::filesystem::directory_iterator(fx.tmp.path() / "logs")) {
    CHECK(entry.path().string().find("initramfs") == std::string::npos);
  }
}

TEST_CASE("lab::LavaMachine: a resumed visit follows its job and submits nothing", "[lab][lava]") {
  LavaFixture fx;
  fx.http->script("GET jobs/9/", {job("Running", "Unknown"), job("Finished", "Complete")});
  fx.http->script("GET jobs/9/logs/", {ok(log_of(k_good_console))});
  auto request = fx.request();
  request.resume = "9";
  auto visit = fx.machine->visit(request);
  REQUIRE(visit);
  CHECK(visit->outcome == lab::VisitOutcome::ok);
  CHECK(fx.http->count("POST") == 0);
  CHECK(fx.saved.empty());
  CHECK(visit->boot_id == "lava1-lava-9");
  request.resume = "9x";
  CHECK_FALSE(fx.machine->visit(request));
}

TEST_CASE("lab::LavaMachine: outcomes of finished jobs", "[lab][lava]") {
  LavaFixture fx;
  fx.script_submission();
  SECTION("Canceled on LAVA: cancelled (back to the queue)") {
    fx.http->script("GET jobs/7/", {job("Finished", "Canceled")});
    fx.http->script("GET jobs/7/logs/", {ok(log_of({}))});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::cancelled);
  }
  SECTION("Incomplete, a bad artifact URL: infra") {
    fx.http->script("GET jobs/7/", {job("Finished", "Incomplete", "Unable to fetch file:///nope")});
    fx.http->script("GET jobs/7/logs/", {ok(log_of({}))});
    fx.http->script("GET jobs/7/tests/?limit=500",
                    {ok(R"({"results": [{"name": "job", "metadata": "error_type: Infrastructure\n"}]})")});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::infra);
    CHECK(visit->message.find("Unable to fetch file:///nope") != std::string::npos);
  }
  SECTION("Incomplete, a kernel panic: boot_failed") {
    fx.http->script("GET jobs/7/", {job("Finished", "Incomplete", "auto-login-action timed out")});
    fx.http->script("GET jobs/7/logs/", {ok(log_of({"Linux version 6.1.192-gabc", "Kernel panic - not syncing: x"}))});
    fx.http->script("GET jobs/7/tests/?limit=500", {ok(R"({"results": []})")});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::boot_failed);
  }
  SECTION("Complete without the primary metric: failed runs, not samples") {
    auto console = k_good_console;
    console[4] = "page_fault.ns_per_op: 5";
    console[7] = "nothing";
    fx.http->script("GET jobs/7/", {job("Finished", "Complete")});
    fx.http->script("GET jobs/7/logs/", {ok(log_of(console))});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::ok);
    REQUIRE(visit->runs.size() == 2);
    CHECK_FALSE(visit->runs[0].ok);
    CHECK(visit->runs[0].error == "primary metric 'page_fault.ops_per_sec' missing from the output");
  }
}

TEST_CASE("lab::LavaMachine: submission failures", "[lab][lava]") {
  LavaFixture fx;
  SECTION("a definition LAVA rejects: an error with the validation message") {
    fx.http->script("POST jobs/", {lab::HttpResponse{400, R"({"message": "job has an invalid schema: extra keys"})"}});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE_FALSE(visit);
    CHECK(visit.error().code == ErrorCode::invalid_config);
    CHECK(visit.error().message.find("invalid schema: extra keys") != std::string::npos);
  }
  SECTION("LAVA unreachable at submission: infra") {
    fx.http->script("POST jobs/", {make_error(ErrorCode::unreachable, "http://lava.test: Connection refused")});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::infra);
    CHECK(visit->message.find("Connection refused") != std::string::npos);
  }
  SECTION("the id cannot be stored: the job is cancelled, infra") {
    fx.script_submission();
    fx.http->script("GET jobs/7/cancel/", {ok("{}")});
    auto request = fx.request();
    request.save_handle = [](const std::string&) -> Status { return make_error(ErrorCode::io, "disk full"); };
    auto visit = fx.machine->visit(request);
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::infra);
    CHECK(fx.http->count("GET jobs/7/cancel/") == 1);
    CHECK(fx.http->exact("GET jobs/7/") == 0);
  }
}

TEST_CASE("lab::LavaMachine: following faults", "[lab][lava]") {
  LavaFixture fx;
  fx.script_submission();
  fx.http->script("GET jobs/7/cancel/", {ok("{}")});
  SECTION("LAVA down mid-job, back again: the visit keeps following") {
    fx.http->script("GET jobs/7/", {job("Running", "Unknown"), make_error(ErrorCode::unreachable, "refused"),
                                    make_error(ErrorCode::unreachable, "refused"), job("Finished", "Complete")});
    fx.http->script("GET jobs/7/logs/", {ok(log_of(k_good_console))});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::ok);
  }
  SECTION("LAVA down for longer than timeouts.unreachable: infra") {
    fx.http->script("GET jobs/7/", {job("Running", "Unknown"), make_error(ErrorCode::unreachable, "refused")});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::infra);
    CHECK(visit->message.find("did not answer for 1s") != std::string::npos);
  }
  SECTION("stuck in Submitted past timeouts.queue: cancelled there, infra") {
    fx.http->script("GET jobs/7/", {job("Submitted", "Unknown")});
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::infra);
    CHECK(visit->message.find("still Submitted after 2s: cancelled") != std::string::npos);
    CHECK(fx.http->count("GET jobs/7/cancel/") == 1);
  }
  SECTION("the daemon stops: the job is left running on LAVA") {
    fx.http->script("GET jobs/7/", {job("Running", "Unknown")});
    std::jthread stopper([&] {
      std::this_thread::sleep_for(50ms);
      fx.cancel = true;
    });
    auto visit = fx.machine->visit(fx.request());
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::infra);
    CHECK(fx.http->count("GET jobs/7/cancel/") == 0);
    CHECK(fx.saved == std::vector<std::string>{"7"});
  }
}

TEST_CASE("lab::LavaMachine: a notify wakes the follower at once", "[lab][lava]") {
  LavaFixture fx;
  // a long backoff: without the notify the visit would take the 10 s poll
  auto fake = std::make_unique<FakeLavaHttp>();
  auto* http = fake.get();
  lab::LavaSettings settings;
  settings.url = "http://lava.test";
  settings.device_type = "qemu";
  lab::LavaMachine machine(fx.machine->spec(), settings, std::move(fake), lab::LavaPolling{10s, 10s, 5s});
  http->script("GET jobs/5/", {job("Running", "Unknown"), job("Finished", "Complete")});
  http->script("GET jobs/5/logs/", {ok(log_of(k_good_console))});
  auto request = fx.request();
  request.resume = "5";
  std::jthread notifier([] {
    std::this_thread::sleep_for(100ms);
    lab::notify_lava_job(5);
  });
  auto started = std::chrono::steady_clock::now();
  auto visit = machine.visit(request);
  REQUIRE(visit);
  CHECK(visit->outcome == lab::VisitOutcome::ok);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
}

TEST_CASE("lab::LavaMachine::slots counts idle devices, cached", "[lab][lava]") {
  LavaFixture fx;
  fx.http->script("GET devices/?limit=500&device_type=qemu",
                  {ok(R"({"results": [{"device_type": "qemu", "state": "Idle", "health": "Good"},
                                      {"device_type": "qemu", "state": "Idle", "health": "Unknown"},
                                      {"device_type": "qemu", "state": "Running", "health": "Good"}]})"),
                   ok(R"({"results": []})")});
  CHECK(fx.machine->slots() == 2);
  CHECK(fx.machine->slots() == 2); // cached: one request
  CHECK(fx.http->count("GET devices/") == 1);
}
