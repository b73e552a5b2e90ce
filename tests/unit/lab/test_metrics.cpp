#include "lab/metrics.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using Metrics = std::map<std::string, double>;

TEST_CASE("lab::parse_metrics reads LKP key: value lines", "[lab]") {
  auto metrics = lab::parse_metrics("bench.ops_per_sec: 12345.6\n"
                                    "  bench.latency_us:\t-3.5e2  \n"
                                    "bench.count: +7\r\n",
                                    lab::MetricFormat::lkp);
  CHECK(metrics == Metrics{{"bench.ops_per_sec", 12345.6}, {"bench.latency_us", -350}, {"bench.count", 7}});
}

TEST_CASE("lab::parse_metrics ignores junk and non-numbers in LKP output", "[lab]") {
  auto metrics = lab::parse_metrics("starting benchmark\n"
                                    "time: 12:30\n"
                                    "bench.unit: ops/s\n"
                                    "bench.ms: 12ms\n"
                                    "bench.nan: nan\n"
                                    "bench.inf: inf\n"
                                    "two words: 5\n"
                                    ": 5\n"
                                    "empty:\n"
                                    "bench.hex: 0x10\n"
                                    "{\"json\": 1}\n"
                                    "bench.ok: 1\n",
                                    lab::MetricFormat::lkp);
  CHECK(metrics == Metrics{{"bench.ok", 1}});
  CHECK(lab::parse_metrics("", lab::MetricFormat::lkp).empty());
}

TEST_CASE("lab::parse_metrics averages a key printed several times (LKP stats)", "[lab]") {
  auto metrics = lab::parse_metrics("x: 1\nx: 2\nx: 6\n", lab::MetricFormat::lkp);
  CHECK(metrics.at("x") == Approx(3.0));
}

TEST_CASE("lab::parse_metrics flattens the JSON object", "[lab]") {
  auto metrics = lab::parse_metrics(R"({"bench": {"ops_per_sec": 12.5, "unit": "ops",
                                        "detail": {"p99": 3}, "ok": true, "list": [1, 2]},
                                        "runtime": 1, "big": 18446744073709551615})",
                                    lab::MetricFormat::json);
  CHECK(metrics ==
        Metrics{{"bench.ops_per_sec", 12.5}, {"bench.detail.p99", 3}, {"runtime", 1}, {"big", 18446744073709551615.0}});
}

TEST_CASE("lab::parse_metrics takes the last top-level JSON object among log text", "[lab]") {
  auto output = "warming up {not json\n"
                "{\"a\": 1, \"nested\": {\"b\": 2}}\n"
                "progress: 50% } done\n"
                "{\"a\": 3, \"s\": \"}{\", \"inner\": {\"c\": 4}}\n"
                "bye\n";
  auto metrics = lab::parse_metrics(output, lab::MetricFormat::json);
  CHECK(metrics == Metrics{{"a", 3}, {"inner.c", 4}});
}

TEST_CASE("lab::parse_metrics gives nothing for output without a JSON object", "[lab]") {
  CHECK(lab::parse_metrics("no json here\n[1, 2]\n", lab::MetricFormat::json).empty());
  CHECK(lab::parse_metrics("{\"a\": 1", lab::MetricFormat::json).empty());
  CHECK(lab::parse_metrics("bench.x: 1\n", lab::MetricFormat::json).empty());
}
