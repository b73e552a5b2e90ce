// A job's env must not steer the loader of the processes it reaches: LD_* and the other loader variables are a
// "file:line: key: what" error, in every env map of the job file.
#include "daemon/config/job_file.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

namespace {

const std::filesystem::path k_env_configs = std::filesystem::path(BISECTD_SOURCE_DIR) / "configs";

auto job_with(const std::string& sections) {
  return daemon::config::parse_job("name: j\nmetrics: {primary: bench.ops}\n" + sections, k_env_configs / "jobs/j.yaml",
                                   k_env_configs);
}

} // namespace

TEST_CASE("job env: loader variables are refused with file:line and the key", "[config]") {
  SECTION("build.env LD_PRELOAD") {
    auto job = job_with("build:\n  recipe: command\n  command: [make]\n  env:\n    CC: gcc\n"
                        "    LD_PRELOAD: /tmp/evil.so\nrun: {command: [./bench]}\n");
    REQUIRE_FALSE(job.has_value());
    CHECK_THAT(job.error().message, Catch::Contains("j.yaml:8: build.env.LD_PRELOAD"));
    CHECK_THAT(job.error().message, Catch::Contains("loader variable"));
  }
  SECTION("run.env GCONV_PATH and verify.layout_env LD_LIBRARY_PATH") {
    auto job = job_with("build: {recipe: command, command: [make]}\nrun:\n  command: [./bench]\n  env:\n"
                        "    GCONV_PATH: /tmp/x\nverify:\n  layout_env: {LD_LIBRARY_PATH: /tmp}\n");
    REQUIRE_FALSE(job.has_value());
    CHECK_THAT(job.error().message, Catch::Contains("j.yaml:7: run.env.GCONV_PATH"));
    CHECK_THAT(job.error().message, Catch::Contains("(and 1 more)"));
  }
  SECTION("ordinary variables pass") {
    auto job = job_with("build: {recipe: command, command: [make], env: {CC: clang, TMPDIR: /tmp}}\n"
                        "run: {command: [./bench], env: {OMP_NUM_THREADS: '4'}}\n");
    REQUIRE(job.has_value());
    CHECK(job->build.env.at("CC") == "clang");
  }
}
