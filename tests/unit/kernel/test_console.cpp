#include "lab/console.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

namespace {

const std::string k_good_boot = "SeaBIOS (version 1.16.2)\r\n"
                                "[    0.000000] Linux version 6.1.192-gabc (bisectd@bisectd) #1 SMP\r\n"
                                "[    1.140037] Run /init as init process\r\n"
                                "BISECTD-BOOT release=6.1.192-gabc\r\n"
                                "BISECTD-RUN-BEGIN 0\r\n"
                                "page_fault.ops_per_sec: 96886.4\r\n"
                                "[    1.500000] random: crng init done\r\n"
                                "page_fault.ops: 97280\r\n"
                                "\r\n"
                                "BISECTD-RUN-END 0 rc=0 start=1.22 end=2.29\r\n"
                                "BISECTD-RUN-BEGIN 1\r\n"
                                "oops\r\n"
                                "\r\n"
                                "BISECTD-RUN-END 1 rc=3 start=2.30 end=2.40\r\n"
                                "BISECTD-DONE\r\n"
                                "[    3.400000] reboot: Restarting system\r\n";

} // namespace

TEST_CASE("lab::parse_console reads markers, runs and their output", "[kernel]") {
  auto log = lab::parse_console(k_good_boot);
  CHECK(log.booted);
  CHECK(log.release == "6.1.192-gabc");
  CHECK(log.done);
  CHECK(log.crash.empty());
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].ended);
  CHECK(log.runs[0].exit_code == 0);
  CHECK(log.runs[0].seconds == Approx(1.07));
  // the kernel line in the middle of the run is not benchmark output
  CHECK(log.runs[0].output == "page_fault.ops_per_sec: 96886.4\npage_fault.ops: 97280\n\n");
  CHECK(log.runs[1].exit_code == 3);
  CHECK(log.runs[1].output.find("oops") != std::string::npos);
  CHECK(lab::boot_failure(log, "6.1.192-gabc").empty());
  CHECK(lab::boot_failure(log, "").empty());
}

TEST_CASE("lab::parse_console spots crashes", "[kernel]") {
  SECTION("panic") {
    auto log = lab::parse_console("[    0.9] Linux version 6.1\n[    1.2] Kernel panic - not syncing: No working init "
                                  "found.  Try passing init= option to kernel.\n");
    CHECK(log.crash.starts_with("Kernel panic - not syncing: No working init found"));
    CHECK(lab::boot_failure(log, "").starts_with("kernel crashed: Kernel panic"));
  }
  SECTION("oops during a run, after the marker") {
    auto log = lab::parse_console("BISECTD-BOOT release=r\nBISECTD-RUN-BEGIN 0\n[    2.0] BUG: kernel NULL pointer "
                                  "dereference, address: 0000000000000000\n[    2.0] Oops: 0002 [#1] SMP\n");
    CHECK(log.booted);
    CHECK(log.crash.starts_with("BUG: kernel NULL pointer dereference"));
    CHECK_FALSE(lab::boot_failure(log, "r").empty());
  }
  SECTION("a second banner means the machine restarted (triple fault)") {
    auto log = lab::parse_console("[    0.0] Linux version 6.1\nBISECTD-BOOT release=r\n[    0.0] Linux version 6.1\n");
    CHECK(log.crash.find("triple fault") != std::string::npos);
  }
  SECTION("benchmark text that merely mentions a bug is not a crash") {
    auto log = lab::parse_console("BISECTD-BOOT release=r\nBISECTD-RUN-BEGIN 0\nno BUG: found\n");
    CHECK(log.crash.empty());
  }
}

TEST_CASE("lab::boot_failure: no marker, wrong kernel", "[kernel]") {
  auto silent = lab::parse_console("SeaBIOS\nBooting from ROM...\n");
  CHECK_FALSE(silent.booted);
  CHECK(lab::boot_failure(silent, "").starts_with("no boot marker"));
  auto other = lab::parse_console("BISECTD-BOOT release=6.1.192-gdeadbeef0000\n");
  CHECK(lab::boot_failure(other, "6.1.192-g0123456789ab") ==
        "booted kernel is '6.1.192-gdeadbeef0000', expected '6.1.192-g0123456789ab'");
}

// Found by tests/fuzz/console: "rc=1e30" overflowed a float-to-int conversion (undefined behaviour). An exit status
// that is not a whole number in range is unknown (-1): the run fails rather than passing as rc=0.
TEST_CASE("lab::parse_console: an exit status out of range or not a number is unknown", "[kernel]") {
  auto log = lab::parse_console("BISECTD-BOOT release=r\n"
                                "BISECTD-RUN-BEGIN 0\nBISECTD-RUN-END 0 rc=33333333333333333333333333333 start=1 end=2\n"
                                "BISECTD-RUN-BEGIN 1\nBISECTD-RUN-END 1 rc=1e30 start=1 end=2\n"
                                "BISECTD-RUN-BEGIN 2\nBISECTD-RUN-END 2 rc=zero start=1 end=2\n"
                                "BISECTD-RUN-BEGIN 3\nBISECTD-RUN-END 3 rc=-2 start=1 end=2\n");
  REQUIRE(log.runs.size() == 4);
  CHECK(log.runs[0].exit_code == -1);
  CHECK(log.runs[1].exit_code == -1);
  CHECK(log.runs[2].exit_code == -1);
  CHECK(log.runs[3].exit_code == -2);
  CHECK(log.runs[3].ended);
}
