// A benchmark's output is hostile: however many metric lines it prints, a run keeps a bounded set.
#include "lab/metrics.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

namespace {

std::string distinct_lines(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += "m" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  }
  return out;
}

} // namespace

TEST_CASE("lab::parse_metrics_capped keeps at most max_metrics names and counts the rest", "[lab]") {
  lab::MetricLimits limits{.max_metrics = 100, .max_name_bytes = 256};
  auto parsed = lab::parse_metrics_capped(distinct_lines(1000) + "m5: 7\n", lab::MetricFormat::lkp, limits);
  CHECK(parsed.metrics.size() == 100);
  CHECK(parsed.dropped_over_cap == 900);
  CHECK(parsed.metrics.at("m5") == 6); // a kept name still averages its later values: (5 + 7) / 2
  CHECK_FALSE(parsed.metrics.contains("m100"));
  CHECK(lab::dropped_metrics_note(parsed, limits) ==
        "bisectd: 900 metric values dropped: a run keeps at most 100 metrics\n");
}

TEST_CASE("lab::parse_metrics_capped drops names over max_name_bytes", "[lab]") {
  lab::MetricLimits limits{.max_metrics = 100, .max_name_bytes = 8};
  auto parsed = lab::parse_metrics_capped("short: 1\nmuch_too_long_name: 2\n", lab::MetricFormat::lkp, limits);
  CHECK(parsed.metrics == std::map<std::string, double>{{"short", 1}});
  CHECK(parsed.dropped_long_names == 1);
  CHECK(lab::dropped_metrics_note(parsed, limits) == "bisectd: 1 metric value dropped: name longer than 8 bytes\n");
}

TEST_CASE("lab::parse_metrics_capped caps a JSON object's members too", "[lab]") {
  std::string object = "log {not json}\n{\"bench\": {";
  for (int i = 0; i < 50; ++i) {
    object += (i ? ", " : "") + std::string("\"m") + std::to_string(i) + "\": " + std::to_string(i);
  }
  object += "}, \"list\": [1, {\"x\": 2}], \"name\": \"x\"}\n";
  lab::MetricLimits limits{.max_metrics = 10, .max_name_bytes = 256};
  auto parsed = lab::parse_metrics_capped(object, lab::MetricFormat::json, limits);
  CHECK(parsed.metrics.size() == 10);
  CHECK(parsed.dropped_over_cap == 40);
  CHECK(parsed.metrics.at("bench.m0") == 0);
}

TEST_CASE("lab::parse_metrics_capped within the limits is parse_metrics", "[lab]") {
  auto parsed = lab::parse_metrics_capped("a: 1\nb: 2\n", lab::MetricFormat::lkp, {});
  CHECK(parsed.dropped_over_cap == 0);
  CHECK(parsed.dropped_long_names == 0);
  CHECK(lab::dropped_metrics_note(parsed, {}).empty());
}

TEST_CASE("lab::judge_run notes the dropped metrics for the run's log, and keeps the default cap", "[lab]") {
  lab::RunSpec spec;
  spec.primary = "m0";
  lab::RunResult run;
  lab::judge_run(run, distinct_lines(10'050), spec, "");
  CHECK(run.ok);
  CHECK(run.metrics.size() == 10'000);
  CHECK(run.log_note == "bisectd: 50 metric values dropped: a run keeps at most 10000 metrics\n");
}

TEST_CASE("lab::add_collected_metrics: a guest's monitors and perf rows stay within the run's cap", "[lab]") {
  lab::MetricLimits limits{.max_metrics = 5, .max_name_bytes = 16};
  lab::RunResult run;
  run.metrics = {{"bench.ops", 10}, {"proc-vmstat.pgfault", 1}};
  run.log_note = "earlier\n";
  std::map<std::string, double> collected = {{"proc-vmstat.pgfault", 99}, {"perf-profile.much_too_long.chain", 1}};
  for (int i = 0; i < 10; ++i) {
    collected.emplace("interrupts." + std::to_string(i), i);
  }
  auto note = lab::add_collected_metrics(run, collected, limits);
  CHECK(run.metrics.size() == 5);
  CHECK(run.metrics.at("proc-vmstat.pgfault") == 1); // the run's own value wins
  CHECK(note == "bisectd: 7 metric values dropped: a run keeps at most 5 metrics\n"
                "bisectd: 1 metric value dropped: name longer than 16 bytes\n");
  CHECK(run.log_note == "earlier\n" + note);
  CHECK(lab::add_collected_metrics(run, {{"bench.ops", 3}}, limits).empty());
}
