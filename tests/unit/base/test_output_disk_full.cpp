// A child's output the daemon cannot write into its log (the file system is full) is told apart from the child's
// own doing (issue 29, item 6): ExitStatus::output_error, code infra.

#include "base/fd.hpp"
#include "base/process.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

TEST_CASE("run(): a capped stdout that cannot be written (ENOSPC) is reported as infra, the exit stays the child's",
          "[base]") {
  REQUIRE(std::filesystem::exists("/dev/full")); // every write to it fails with ENOSPC, like a full disk
  base::Command cmd;
  cmd.argv = {"sh", "-c", "echo bench.ops_per_sec: 1; exit 0"};
  cmd.stdout_path = "/dev/full";
  cmd.stdout_limit = 4096;
  cmd.append = true;
  auto status = base::run(cmd);
  REQUIRE(status);
  CHECK(status->ok());
  REQUIRE(status->output_error);
  CHECK(status->output_error->code == ErrorCode::infra);
  CHECK(status->output_error->message.find("No space left on device") != std::string::npos);

  cmd.stdout_path = "/dev/null";
  auto fine = base::run(cmd);
  REQUIRE(fine);
  CHECK_FALSE(fine->output_error);
}

TEST_CASE("mentions_disk_full knows strerror's words for ENOSPC and EDQUOT", "[base]") {
  CHECK(base::mentions_disk_full("dd: error writing '/tmp/x': No space left on device\n"));
  CHECK(base::mentions_disk_full("cp: Disk quota exceeded"));
  CHECK_FALSE(base::mentions_disk_full("bench: segmentation fault"));
  CHECK(base::is_disk_full(ENOSPC));
  CHECK(base::is_disk_full(EDQUOT));
  CHECK_FALSE(base::is_disk_full(EIO));
}
