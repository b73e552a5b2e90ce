#include "base/fs.hpp"
#include "base/strings.hpp"
#include "lab/local_machine.hpp"
#include "lab/proc_monitors.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

lab::MachineSpec make_spec(std::string name, std::string backend = "local") {
  lab::MachineSpec spec;
  spec.name = std::move(name);
  spec.group = "local";
  spec.backend = std::move(backend);
  return spec;
}

const std::filesystem::path k_fake_bench = std::filesystem::path(BISECTD_SOURCE_DIR) / "tests/fake-bin/fake-bench";

// An artifact dir holding ./bench (the fake benchmark) and a visit request for it.
struct LocalFixture {
  test::TempDir tmp;
  std::filesystem::path artifacts = tmp.path() / "artifacts";
  lab::LocalMachine machine{make_spec("local1")};

  LocalFixture() {
    std::filesystem::create_directories(artifacts);
    std::filesystem::copy_file(k_fake_bench, artifacts / "bench");
  }

  lab::VisitRequest request(std::vector<std::string> args = {}, int runs = 3) const {
    lab::VisitRequest req;
    req.commit = "c0ffee";
    req.artifact_dir = artifacts;
    req.log_dir = tmp.path() / "logs";
    req.runs = runs;
    req.run.command = {"./bench"};
    req.run.command.insert(req.run.command.end(), args.begin(), args.end());
    req.run.timeout = 10s;
    req.run.primary = "bench.ops_per_sec";
    return req;
  }
};

} // namespace

TEST_CASE("lab::LocalMachine runs the benchmark n times in the artifact dir", "[lab]") {
  LocalFixture fx;
  auto req = fx.request({"--count-file", "runs.txt"});
  req.run.env = {{"FAKE_BENCH_OPS", "777.5"}};
  auto visit = fx.machine.visit(req);
  REQUIRE(visit);
  CHECK(visit->outcome == lab::VisitOutcome::ok);
  CHECK_FALSE(visit->boot_id.empty());
  REQUIRE(visit->runs.size() == 3);
  std::set<std::filesystem::path> logs;
  for (int i = 0; i < 3; ++i) {
    const auto& run = visit->runs[static_cast<std::size_t>(i)];
    INFO("run " << i << ": " << run.error);
    CHECK(run.index == i);
    CHECK(run.ok);
    CHECK(run.error.empty());
    CHECK(run.metrics.at("bench.ops_per_sec") == Approx(777.5));
    CHECK(run.metrics.at("bench.runtime") == Approx(1));
    CHECK(run.seconds > 0);
    REQUIRE(std::filesystem::exists(run.log_path));
    CHECK(run.log_path.parent_path() == req.log_dir);
    auto log = base::read_file(run.log_path);
    REQUIRE(log);
    // cwd is the artifact dir; stderr is in the log too.
    CHECK_THAT(*log, Catch::Contains("starting in " + fx.artifacts.string()) && Catch::Contains("done"));
    logs.insert(run.log_path);
  }
  CHECK(logs.size() == 3);
  auto counted = base::read_file(fx.artifacts / "runs.txt");
  REQUIRE(counted);
  CHECK(*counted == "run\nrun\nrun\n");
}

TEST_CASE("lab::LocalMachine parses JSON output when asked", "[lab]") {
  LocalFixture fx;
  auto req = fx.request({"--json", "--ops", "12"}, 1);
  req.run.format = lab::MetricFormat::json;
  auto visit = fx.machine.visit(req);
  REQUIRE(visit);
  REQUIRE(visit->runs.size() == 1);
  CHECK(visit->runs[0].ok);
  CHECK(visit->runs[0].metrics.at("bench.ops_per_sec") == 12);
}

TEST_CASE("lab::LocalMachine fails runs without the primary metric or with a bad exit", "[lab]") {
  LocalFixture fx;
  SECTION("primary metric missing") {
    auto visit = fx.machine.visit(fx.request({"--no-metric"}, 2));
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::ok);
    REQUIRE(visit->runs.size() == 2);
    for (const auto& run : visit->runs) {
      CHECK_FALSE(run.ok);
      CHECK_THAT(run.error, Catch::Contains("bench.ops_per_sec") && Catch::Contains("missing"));
    }
  }
  SECTION("a different metric is not the primary") {
    auto req = fx.request({}, 1);
    req.run.primary = "bench.other";
    auto visit = fx.machine.visit(req);
    REQUIRE(visit);
    CHECK_FALSE(visit->runs.at(0).ok);
    CHECK(visit->runs.at(0).metrics.contains("bench.ops_per_sec"));
  }
  SECTION("non-zero exit even with the metric printed") {
    auto visit = fx.machine.visit(fx.request({"--exit", "3"}, 1));
    REQUIRE(visit);
    CHECK_FALSE(visit->runs.at(0).ok);
    CHECK(visit->runs.at(0).error == "benchmark exit 3");
  }
  SECTION("program missing") {
    auto req = fx.request({}, 1);
    req.run.command = {"./no-such-bench"};
    auto visit = fx.machine.visit(req);
    REQUIRE(visit);
    CHECK_FALSE(visit->runs.at(0).ok);
    CHECK_THAT(visit->runs.at(0).error, Catch::Contains("no-such-bench"));
  }
}

TEST_CASE("lab::LocalMachine applies the timeout per run", "[lab]") {
  LocalFixture fx;
  SECTION("runs that together exceed the timeout are all fine") {
    auto req = fx.request({"--sleep", "0.55"}, 2);
    req.run.timeout = 1s;
    auto visit = fx.machine.visit(req);
    REQUIRE(visit);
    REQUIRE(visit->runs.size() == 2);
    CHECK(visit->runs[0].ok);
    CHECK(visit->runs[1].ok);
  }
  SECTION("a run past the timeout is killed and failed") {
    auto req = fx.request({"--sleep", "10"}, 1);
    req.run.timeout = 1s;
    auto start = std::chrono::steady_clock::now();
    auto visit = fx.machine.visit(req);
    auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(visit);
    REQUIRE(visit->runs.size() == 1);
    CHECK_FALSE(visit->runs[0].ok);
    CHECK_THAT(visit->runs[0].error, Catch::Contains("timed out"));
    CHECK(took < 4s);
  }
}

TEST_CASE("lab::LocalMachine gives every visit a fresh boot id", "[lab]") {
  LocalFixture fx;
  std::set<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto visit = fx.machine.visit(fx.request({}, 1));
    REQUIRE(visit);
    CHECK(base::starts_with(visit->boot_id, "local1-"));
    ids.insert(visit->boot_id);
  }
  CHECK(ids.size() == 3);
}

TEST_CASE("lab::LocalMachine honours cancel as an infra outcome", "[lab]") {
  LocalFixture fx;
  std::atomic<bool> cancel{true};
  auto req = fx.request({"--count-file", "runs.txt"});
  req.cancel = &cancel;
  auto visit = fx.machine.visit(req);
  REQUIRE(visit);
  CHECK(visit->outcome == lab::VisitOutcome::infra);
  CHECK(visit->runs.empty());
  CHECK_THAT(visit->message, Catch::Contains("cancelled after 0 of 3"));
  CHECK_FALSE(std::filesystem::exists(fx.artifacts / "runs.txt"));
}

TEST_CASE("lab::LocalMachine rejects invalid requests and reports a missing artifact dir", "[lab]") {
  LocalFixture fx;
  auto req = fx.request();
  SECTION("no runs") {
    req.runs = 0;
    CHECK_FALSE(fx.machine.visit(req));
  }
  SECTION("empty command") {
    req.run.command.clear();
    CHECK_FALSE(fx.machine.visit(req));
  }
  SECTION("no primary metric") {
    req.run.primary.clear();
    CHECK_FALSE(fx.machine.visit(req));
  }
  SECTION("artifact dir missing") {
    req.artifact_dir = fx.tmp.path() / "gone";
    auto visit = fx.machine.visit(req);
    REQUIRE(visit);
    CHECK(visit->outcome == lab::VisitOutcome::infra);
    CHECK_THAT(visit->message, Catch::Contains("gone"));
  }
}

TEST_CASE("lab::make_machine knows the local backend only by name", "[lab]") {
  auto local = lab::make_machine(make_spec("box"));
  REQUIRE(local);
  CHECK((*local)->spec().name == "box");

  auto unknown = lab::make_machine(make_spec("box", "warp"));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::invalid_config);
  CHECK_THAT(unknown.error().message, Catch::StartsWith("machine box: unknown backend 'warp' (known: local"));

  auto with_settings = make_spec("box");
  with_settings.settings["host"] = lab::scalar_setting("x");
  auto bad = lab::make_machine(with_settings);
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("host"));
}

TEST_CASE("lab::LocalMachine adds the job's monitors to each run's metrics", "[lab]") {
  LocalFixture fx;
  auto req = fx.request({"--sleep", "0.2"}, 2);
  req.run.env = {{"FAKE_BENCH_OPS", "555"}};
  req.run.monitors = {"proc-vmstat", "time"};
  auto visit = fx.machine.visit(req);
  REQUIRE(visit);
  REQUIRE(visit->runs.size() == 2);
  for (const auto& run : visit->runs) {
    REQUIRE(run.ok);
    CHECK(run.metrics.at("bench.ops_per_sec") == 555); // the benchmark's own metrics are untouched
    CHECK(run.metrics.at("bench.runtime") == 1);
    CHECK(run.metrics.at("time.elapsed_time") >= 0.2); // the sleep is in the wall time...
    CHECK(run.metrics.at("time.elapsed_time") == Approx(run.seconds).margin(0.01));
    CHECK(run.metrics.at("time.percent_of_cpu_this_job_got") < 100); // ...and not in the CPU time
    CHECK(run.metrics.at("time.minor_page_faults") > 0);
    CHECK(run.metrics.contains("proc-vmstat.pgfault")); // this host has /proc/vmstat
    CHECK(run.metrics.at("proc-vmstat.pgfault") >= run.metrics.at("time.minor_page_faults"));
    for (const auto& [name, value] : run.metrics) {
      INFO(name);
      CHECK((name.starts_with("bench.") || name.starts_with("time.") || name.starts_with("proc-vmstat.")));
    }
  }
}

TEST_CASE("lab::LocalMachine without monitors adds no metric", "[lab]") {
  LocalFixture fx;
  auto visit = fx.machine.visit(fx.request({}, 1));
  REQUIRE(visit);
  REQUIRE(visit->runs.size() == 1);
  CHECK(visit->runs[0].metrics.size() == 2);
}

TEST_CASE("lab::read_proc_snapshot leaves out what it cannot read", "[lab]") {
  test::TempDir proc;
  REQUIRE(base::write_file_atomic(proc.path() / "vmstat", "pgfault 5\n"));
  auto snapshot = lab::read_proc_snapshot({"proc-vmstat", "interrupts", "time"}, proc.path());
  CHECK(snapshot.files.size() == 1);
  CHECK(snapshot.files.at("vmstat") == "pgfault 5\n");
  base::ExitStatus status;
  status.duration = 1000ms; // no usage: the child was not reaped with its rusage
  auto later = snapshot;
  later.files["vmstat"] = "pgfault 12\n";
  auto metrics = lab::run_monitor_metrics({"proc-vmstat", "interrupts", "time"}, snapshot, later, status);
  CHECK(metrics == std::map<std::string, double>{{"proc-vmstat.pgfault", 7}});
}
