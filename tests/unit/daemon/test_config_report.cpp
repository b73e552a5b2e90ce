// The config file's report keys (mail.reported_by, mail.archive_url: absent means no tag lines) and what a
// `local` machine is called in reports: this host's CPU model, threads and memory.
#include "base/fs.hpp"
#include "daemon/config/config.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <thread>

using namespace bisectd;
using bisectd::test::TempDir;

TEST_CASE("config: Reported-by and the archive only when configured", "[daemon][config]") {
  TempDir tmp;
  daemon::config::Config defaults;
  CHECK(defaults.reported_by.empty());
  CHECK(defaults.archive_url.empty());
  auto file = tmp.path() / "bisectd.yaml";
  REQUIRE(base::write_file_atomic(file, "mail:\n  reported_by: \"perf robot <robot@example.org>\"\n"
                                        "  archive_url: https://lore.kernel.org/perf-robot/\n"));
  daemon::config::Config config;
  REQUIRE(daemon::config::load_config_file(file, config));
  CHECK(config.reported_by == "perf robot <robot@example.org>");
  CHECK(config.archive_url == "https://lore.kernel.org/perf-robot/");
  REQUIRE(base::write_file_atomic(file, "mail:\n  archive: x\n"));
  auto bad = daemon::config::load_config_file(file, config);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("bisectd.yaml:2") != std::string::npos);
}

TEST_CASE("config: a local machine is described by this host's CPU, threads and memory", "[daemon][config]") {
  TempDir tmp;
  daemon::config::Config config;
  config.data_dir = tmp.path() / "data";
  REQUIRE(daemon::config::finish_config(config));
  REQUIRE(config.machines.size() == 1);
  const auto& description = config.machines[0].description;
  INFO(description);
  // "8 threads 1 socket AMD EPYC 7282 16-Core Processor with 31G memory"
  auto threads = std::stoul(description); // leading digits
  CHECK(description.find(threads == 1 ? " thread " : " threads ") != std::string::npos);
  CHECK(description.find(" socket") != std::string::npos);
  CHECK(description.find(" with ") != std::string::npos);
  CHECK(description.ends_with(" memory"));
  CHECK(description.find("this host") == std::string::npos);
  CHECK(threads >= std::thread::hardware_concurrency()); // the host's, not this process's affinity
  // A lab file's description is kept.
  config.machines[0].description = "my box";
  REQUIRE(daemon::config::finish_config(config));
  CHECK(config.machines[0].description == "my box");
}
