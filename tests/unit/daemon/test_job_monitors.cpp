// The job file's `monitors:` key: defaults by recipe, explicit lists, unknown names as one-line errors.

#include "daemon/config/job_file.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

namespace {

const std::filesystem::path k_configs = std::filesystem::path(BISECTD_SOURCE_DIR) / "configs";

std::string job_text(const std::string& recipe, const std::string& extra) {
  std::string build = recipe == "kernel" ? "build: {recipe: kernel, config: tinyconfig}\n"
                                         : "build: {recipe: command, command: [make], artifacts: [bench]}\n";
  return "name: j\n" + build + "run: {command: [./bench]}\nmetrics: {primary: bench.ops}\n" + extra;
}

Result<daemon::Job> parse(const std::string& recipe, const std::string& extra) {
  return daemon::config::parse_job(job_text(recipe, extra), k_configs / "jobs/j.yaml", k_configs);
}

} // namespace

TEST_CASE("monitors: all by default for kernel jobs, none for command jobs", "[config]") {
  auto kernel = parse("kernel", "");
  REQUIRE(kernel);
  CHECK(kernel->run.monitors ==
        std::set<std::string>{"proc-vmstat", "vmstat", "interrupts", "softirqs", "meminfo", "time"});
  auto command = parse("command", "");
  REQUIRE(command);
  CHECK(command->run.monitors.empty());
  auto none = parse("kernel", "monitors: []\n");
  REQUIRE(none);
  CHECK(none->run.monitors.empty());
  auto some = parse("command", "monitors: [time, proc-vmstat]\n");
  REQUIRE(some);
  CHECK(some->run.monitors == std::set<std::string>{"proc-vmstat", "time"});
}

TEST_CASE("monitors: an unknown name or a non-list is a one-line file:line error", "[config]") {
  auto unknown = parse("command", "monitors: [time, turbostat]\n");
  REQUIRE_FALSE(unknown);
  INFO(unknown.error().message);
  CHECK(unknown.error().message.find("j.yaml:5: monitors: unknown monitor 'turbostat'") != std::string::npos);
  CHECK(unknown.error().message.find('\n') == std::string::npos);
  auto scalar = parse("command", "monitors: time\n");
  REQUIRE_FALSE(scalar);
  CHECK(scalar.error().message.find("j.yaml:5: monitors:") != std::string::npos);
}

TEST_CASE("perf: stat and profile on by default for kernel jobs, off for command jobs", "[config]") {
  auto kernel = parse("kernel", "");
  REQUIRE(kernel);
  CHECK(kernel->run.perf.stat);
  CHECK(kernel->run.perf.profile);
  auto command = parse("command", "");
  REQUIRE(command);
  CHECK_FALSE(command->run.perf.any());
  auto no_profile = parse("kernel", "perf: {profile: false}\n");
  REQUIRE(no_profile);
  CHECK(no_profile->run.perf.stat);
  CHECK_FALSE(no_profile->run.perf.profile);
  auto asked = parse("command", "perf: {stat: true, profile: yes}\n");
  REQUIRE(asked);
  CHECK(asked->run.perf.stat);
  CHECK(asked->run.perf.profile);
}

TEST_CASE("perf: a bad value, an unknown key or a non-mapping is a one-line file:line error", "[config]") {
  for (const auto& [extra, expected] : std::vector<std::pair<std::string, std::string>>{
         {"perf: {stat: maybe}\n", "j.yaml:5: perf.stat: must be true or false, not 'maybe'"},
         {"perf: {stat: true, record: true}\n", "j.yaml:5: perf"},
         {"perf: true\n", "j.yaml:5: perf: must be a mapping"},
         {"perf: {profile: [a]}\n", "j.yaml:5: perf.profile"}}) {
    auto job = parse("kernel", extra);
    REQUIRE_FALSE(job);
    INFO(job.error().message);
    CHECK(job.error().message.find(expected) != std::string::npos);
    CHECK(job.error().message.find('\n') == std::string::npos);
  }
  auto unknown = parse("kernel", "perf: {stat: true, record: true}\n");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("record") != std::string::npos);
}
