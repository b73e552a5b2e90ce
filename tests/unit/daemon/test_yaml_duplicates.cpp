// A key given twice in one mapping: yaml-cpp 0.7 keeps both and map[key] reads the first, so the second (a later
// `env:`, a second `command:`) would be ignored without a word. Job, config and lab files refuse it at its line.
#include "daemon/config/config.hpp"
#include "daemon/config/job_file.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

namespace {

const std::filesystem::path k_dup_configs = std::filesystem::path(BISECTD_SOURCE_DIR) / "configs";
const std::string k_dup_job = "name: j\nbuild: {recipe: command, command: [make], artifacts: [bench]}\n"
                              "run: {command: [./bench]}\nmetrics: {primary: bench.ops}\n";

} // namespace

TEST_CASE("yaml duplicates: a job file refuses a key given twice, naming file:line and the key", "[config][hostile]") {
  SECTION("top level") {
    auto job = daemon::config::parse_job(k_dup_job + "name: other\n", k_dup_configs / "jobs/j.yaml", k_dup_configs);
    REQUIRE_FALSE(job.has_value());
    CHECK_THAT(job.error().message, Catch::Contains("j.yaml:5: name: duplicate key (first at line 1)"));
  }
  SECTION("nested: a param given twice") {
    auto job = daemon::config::parse_job(k_dup_job + "params:\n  threads: 4\n  mode: a\n  threads: 8\n",
                                         k_dup_configs / "jobs/j.yaml", k_dup_configs);
    REQUIRE_FALSE(job.has_value());
    CHECK_THAT(job.error().message, Catch::Contains("j.yaml:8: params.threads: duplicate key (first at line 6)"));
  }
  SECTION("in a flow mapping") {
    auto job =
      daemon::config::parse_job("name: j\nbuild: {recipe: command, command: [make], artifacts: [bench]}\n"
                                "run: {command: [./bench], command: [./evil]}\nmetrics: {primary: bench.ops}\n",
                                k_dup_configs / "jobs/j.yaml", k_dup_configs);
    REQUIRE_FALSE(job.has_value());
    CHECK_THAT(job.error().message, Catch::Contains("j.yaml:3: run.command: duplicate key (first at line 3)"));
  }
  SECTION("the same key in two mappings is fine") {
    auto job =
      daemon::config::parse_job(k_dup_job + "params:\n  name: x\n", k_dup_configs / "jobs/j.yaml", k_dup_configs);
    CHECK(job.has_value());
  }
}

TEST_CASE("yaml duplicates: the daemon config refuses a key given twice", "[config][hostile]") {
  daemon::config::Config config;
  SECTION("top level") {
    auto status =
      daemon::config::parse_config("listen: 127.0.0.1:8765\nsandbox: auto\nsandbox: none\n", "bisectd.yaml", config);
    REQUIRE_FALSE(status.has_value());
    CHECK_THAT(status.error().message, Catch::Contains("bisectd.yaml:3: sandbox: duplicate key (first at line 2)"));
  }
  SECTION("in a section") {
    auto status =
      daemon::config::parse_config("mail:\n  from: a@example.org\n  from: b@example.org\n", "bisectd.yaml", config);
    REQUIRE_FALSE(status.has_value());
    CHECK_THAT(status.error().message, Catch::Contains("bisectd.yaml:3: mail.from: duplicate key (first at line 2)"));
  }
}

TEST_CASE("yaml duplicates: a lab file refuses a key given twice, in a machine and its settings", "[config][hostile]") {
  SECTION("a machine's key") {
    auto lab = daemon::config::parse_lab("machines:\n  - name: m1\n    backend: local\n    name: m2\n", "lab.yaml");
    REQUIRE_FALSE(lab.has_value());
    CHECK_THAT(lab.error().message, Catch::Contains("lab.yaml:4: machines[0].name: duplicate key (first at line 2)"));
  }
  SECTION("a nested setting") {
    auto lab = daemon::config::parse_lab(
      "machines:\n  - name: m1\n    settings:\n      ssh:\n        host: a\n        host: b\n", "lab.yaml");
    REQUIRE_FALSE(lab.has_value());
    CHECK_THAT(lab.error().message,
               Catch::Contains("lab.yaml:6: machines[0].settings.ssh.host: duplicate key (first at line 5)"));
  }
  SECTION("the top-level list given twice") {
    auto lab = daemon::config::parse_lab("machines:\n  - name: m1\nmachines:\n  - name: m2\n", "lab.yaml");
    REQUIRE_FALSE(lab.has_value());
    CHECK_THAT(lab.error().message, Catch::Contains("lab.yaml:3: machines: duplicate key (first at line 1)"));
  }
}

TEST_CASE("yaml duplicates: an alias bomb is refused, not walked for ever", "[config][hostile]") {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char previous = 'a';
  for (char name = 'b'; name <= 'j'; ++name, ++previous) { // 10^9 leaves through aliases
    yaml += std::string(1, name) + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) {
      yaml += std::string(i == 0 ? "" : ", ") + "*" + previous;
    }
    yaml += "]\n";
  }
  daemon::config::Config config;
  auto status = daemon::config::parse_config(yaml, "bisectd.yaml", config);
  REQUIRE_FALSE(status.has_value());
  CHECK_THAT(status.error().message, Catch::Contains("more than 100000 values"));
}
