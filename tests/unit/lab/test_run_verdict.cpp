// Bad benchmark output: each case of docs/reliability.md's "output-" rows, judged as every backend judges a run.
#include "lab/metrics.hpp"
#include "support/catalogue_rows.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

namespace {

struct OutputCase {
  std::string id;
  std::string output;
  lab::MetricFormat format = lab::MetricFormat::lkp;
  std::string exit_problem; // how the backend saw the benchmark end ("" = exit 0)
  std::string error;        // the run's one-line error
};

const std::vector<OutputCase> k_cases = {
  {"output-no-primary", "starting\nbench.latency_ns: 12\ndone\n", lab::MetricFormat::lkp, "",
   "primary metric 'bench.ops_per_sec' missing from the output"},
  {"output-empty", " \n\n", lab::MetricFormat::lkp, "",
   "primary metric 'bench.ops_per_sec' missing from the output (the output is empty)"},
  {"output-not-a-number", "warming up\nbench.ops_per_sec: fast\n", lab::MetricFormat::lkp, "",
   "primary metric 'bench.ops_per_sec' missing from the output (line 2: 'fast' is not a finite number)"},
  {"output-not-finite", "bench.ops_per_sec: nan\n", lab::MetricFormat::lkp, "",
   "primary metric 'bench.ops_per_sec' missing from the output (line 1: 'nan' is not a finite number)"},
  {"output-unit-suffix", "bench.ops_per_sec: 1200 ops/s\n", lab::MetricFormat::lkp, "",
   "primary metric 'bench.ops_per_sec' missing from the output (line 1: '1200 ops/s' is not a finite number)"},
  {"output-control-bytes", "bench.ops_per_sec: \x1b[31m12\x1b[0m\n", lab::MetricFormat::lkp, "",
   "primary metric 'bench.ops_per_sec' missing from the output (line 1: '?[31m12?[0m' is not a finite number)"},
  {"output-json-truncated", "{\"bench\": {\"ops_per_sec\": 12", lab::MetricFormat::json, "",
   "primary metric 'bench.ops_per_sec' missing from the output (no JSON object in the output)"},
  {"output-json-string", "{\"bench\": {\"ops_per_sec\": \"12\"}}", lab::MetricFormat::json, "",
   "primary metric 'bench.ops_per_sec' missing from the output (it is a string, not a number)"},
  {"output-exit-status", "bench.ops_per_sec: 12\n", lab::MetricFormat::lkp, "benchmark exit 3", "benchmark exit 3"},
  {"output-no-end-marker", "bench.ops_per_sec: 12\n", lab::MetricFormat::lkp, "no end marker", "no end marker"},
};

} // namespace

TEST_CASE("bad benchmark output: one-line errors, documented in docs/reliability.md", "[lab][catalogue]") {
  auto documented = testing::catalogue_rows("## Bad benchmark output and commit metadata", "output-");
  for (const auto& c : k_cases) {
    INFO(c.id);
    lab::RunSpec spec;
    spec.primary = "bench.ops_per_sec";
    spec.format = c.format;
    lab::RunResult run;
    lab::judge_run(run, c.output, spec, c.exit_problem);
    CHECK_FALSE(run.ok);
    CHECK(run.error == c.error);
    CHECK(run.error.find('\n') == std::string::npos);
    REQUIRE(documented.contains(c.id));
    CHECK(documented.at(c.id).find("`" + c.error + "`") != std::string::npos);
  }
  CHECK(documented.size() == k_cases.size());
}

TEST_CASE("lab::judge_run: a run with its primary metric is a sample, with every metric it printed", "[lab]") {
  lab::RunSpec spec;
  spec.primary = "bench.ops_per_sec";
  lab::RunResult run;
  run.error = "left from before";
  lab::judge_run(run, "bench.ops_per_sec: 12\nbench.latency_ns: 3\nb\xff" "d: 4\n", spec, "");
  CHECK(run.ok);
  CHECK(run.error.empty());
  CHECK(run.metrics == std::map<std::string, double>{{"b\xff" "d", 4}, {"bench.latency_ns", 3}, {"bench.ops_per_sec", 12}});

  spec.format = lab::MetricFormat::json;
  lab::judge_run(run, "log {not json}\n{\"bench\": {\"ops_per_sec\": 7.5, \"name\": \"x\"}}\n", spec, "");
  CHECK(run.ok);
  CHECK(run.metrics == std::map<std::string, double>{{"bench.ops_per_sec", 7.5}});
}
