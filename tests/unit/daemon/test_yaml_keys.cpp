// Mapping keys that are not plain strings (`? [a, b]: x`, found by tests/fuzz/job_file) are a "file:line: key:
// what" error in job, config and lab files, not a yaml-cpp exception out of the reader.
#include "daemon/config/config.hpp"
#include "daemon/config/job_file.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

namespace {

const std::filesystem::path k_configs = std::filesystem::path(BISECTD_SOURCE_DIR) / "configs";
const std::string k_job = "name: j\nbuild: {recipe: command, command: [make], artifacts: [bench]}\n"
                          "run: {command: [./bench]}\nmetrics: {primary: bench.ops}\n";

} // namespace

TEST_CASE("yaml keys: a sequence as a key is an error naming the section", "[config]") {
  SECTION("job params") {
    auto job = daemon::config::parse_job(k_job + "params:\n  ? [a, b]\n  : x\n", k_configs / "jobs/j.yaml", k_configs);
    REQUIRE_FALSE(job.has_value());
    CHECK_THAT(job.error().message, Catch::Contains("j.yaml:6: params: keys must be plain strings"));
  }
  SECTION("job top level and a string map") {
    auto job = daemon::config::parse_job(k_job + "? {a: 1}\n: x\nverify: {layout_env: {? [x]: y}}\n",
                                         k_configs / "jobs/j.yaml", k_configs);
    REQUIRE_FALSE(job.has_value());
    CHECK_THAT(job.error().message, Catch::Contains("keys must be plain strings"));
  }
  SECTION("config file") {
    daemon::config::Config config;
    auto status = daemon::config::parse_config("mail: {? [a]: b}\n", "c.yaml", config);
    REQUIRE_FALSE(status.has_value());
    CHECK_THAT(status.error().message, Catch::Contains("c.yaml:1: mail: keys must be plain strings"));
  }
  SECTION("lab file machine settings, nested too") {
    auto lab = daemon::config::parse_lab("machines:\n  - name: m1\n    settings: {? [a]: b, t: {? [c]: d}}\n",
                                         "lab.yaml");
    REQUIRE_FALSE(lab.has_value());
    CHECK_THAT(lab.error().message, Catch::Contains("lab.yaml:3: machines[0].settings: keys must be plain strings"));
  }
}

// Found by tests/fuzz/lab_file: a machine that is a scalar or a list made yaml-cpp throw BadSubscript.
TEST_CASE("lab file: a machine that is not a mapping is an error naming it", "[config]") {
  auto lab = daemon::config::parse_lab("machines:\n  - name: m1\n  - just-a-name\n  - [a, b]\n", "lab.yaml");
  REQUIRE_FALSE(lab.has_value());
  CHECK_THAT(lab.error().message, Catch::Contains("lab.yaml:3: machines[1]: must be a mapping"));
  CHECK_THAT(lab.error().message, Catch::Contains("(and 1 more)")); // machines[2]
}
