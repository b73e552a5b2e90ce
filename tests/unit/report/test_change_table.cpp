#include "report/change_table.hpp"

#include <catch2/catch.hpp>

using namespace bisectd::report;

TEST_CASE("report::format_change_row reproduces LKP's published rows", "[report][table]") {
  // Rows from the LKP report skeleton (0-Day's LKP report layout).
  CHECK(format_change_row({"aim7.jobs-per-min", {616938, 616938, 616938}, {593885, 593885, 593885}}) ==
        "    616938            -3.7%     593885        aim7.jobs-per-min");
  CHECK(format_change_row({"aim7.time.system_time", {2310, 2310}, {2455, 2455}}) ==
        "      2310            +6.3%       2455        aim7.time.system_time");
  // One non-zero sample among three: the ±141% signature; absolute stddev above 2% is shown, truncated.
  CHECK(format_change_row({"cpuidle.C3.time", {0, 0, 760584}, {2941982, 2941982, 2941982}}) ==
        "    253528 \u00b1141%   +1060.4%    2941982        cpuidle.C3.time");
  // Metrics ending in '%' get an absolute delta.
  CHECK(format_change_row({"mpstat.cpu.all.sys%", {82.77}, {91.45}}) ==
        "     82.77            +8.7       91.45        mpstat.cpu.all.sys%");
  CHECK(format_change_row({"perf-profile.self.cycles-pp.memcpy", {1.5}, {4.0}}).find("+2.5  ") != std::string::npos);
}

TEST_CASE("report: LKP number formats", "[report][table]") {
  SECTION("averages: %.2f below 1000, %.4g above 1e8, truncated integers between") {
    CHECK(format_change_row({"m", {999.994}, {1000.9}}).starts_with("    999.99"));
    CHECK(format_change_row({"m", {1000.9}, {1000.9}}).starts_with("      1000"));
    CHECK(format_change_row({"m", {1.234e9}, {1.234e9}}).starts_with(" 1.234e+09"));
    CHECK(format_change_row({"m", {-5}, {-5}}).starts_with("     -5.00"));
  }
  SECTION("stddev only above 2% of the mean") {
    // σ/μ = 2% exactly: hidden; 2.5%: shown as " ±  2%".
    CHECK(format_change_row({"m", {98, 102}, {100, 100}}).substr(10, 6) == "      ");
    CHECK(format_change_row({"m", {97.5, 102.5}, {100, 100}}).substr(10, 7) == " \u00b1  2%");
  }
  SECTION("samples whose mean or spread overflows: no ±, no undefined integer cast (a fuzzer's crash)") {
    auto row = format_change_row({"m", {1e308, 1.7e308, -1e308}, {1e300, 1e300}});
    CHECK(row.find("m") != std::string::npos);
    CHECK(row.find("\u00b1") == std::string::npos);
  }
  SECTION("change: %+.1f%% below 1e5, %.2g from there on") {
    CHECK(format_change_row({"m", {100}, {100}}).find("      +0.0% ") != std::string::npos);
    CHECK(format_change_row({"m", {1}, {2000}}).find("    +2e+05% ") != std::string::npos);
    CHECK(format_change_row({"m", {0}, {5}}).find("+5e+102%") != std::string::npos); // avg0 = 1e-100, as LKP
  }
}

TEST_CASE("report::changed_beyond_noise follows LKP's separation rule", "[report][table]") {
  CHECK(changed_beyond_noise({"m", {100, 101, 102}, {90, 91, 92}}));
  CHECK(changed_beyond_noise({"m", {90, 91, 92}, {100, 101, 102}}));
  CHECK_FALSE(changed_beyond_noise({"m", {100, 101, 102}, {99, 100.5, 103}}));          // overlapping
  CHECK_FALSE(changed_beyond_noise({"m", {100, 100.1, 100.2}, {100.5, 100.6, 100.7}})); // < 1% apart
  CHECK_FALSE(changed_beyond_noise({"m", {100, 101}, {90, 91}}));                       // < 3 samples both sides
  CHECK(changed_beyond_noise({"m", {100, 101}, {90, 91, 92}}));
  CHECK_FALSE(changed_beyond_noise({"m", {}, {90, 91, 92}}));
}

TEST_CASE("report::format_change_table layout", "[report][table]") {
  std::string table =
    format_change_table("4c86da8ea2d2f784aa0011223344556677889900", "f6eccb430010201d3c155b73035a1b2c3d4e5f60",
                        {{"aim7.jobs-per-min", {616938}, {593885}}});
  CHECK(table == "4c86da8ea2d2f784 f6eccb430010201d3c155b73035\n"
                 "---------------- ---------------------------\n"
                 "         %stddev     %change         %stddev\n"
                 "             \\          |                \\\n"
                 "    616938            -3.7%     593885        aim7.jobs-per-min\n");
}

TEST_CASE("report: mean and population stddev", "[report][table]") {
  CHECK(mean({}) == 0);
  CHECK(mean({1, 2, 3}) == Approx(2));
  CHECK(population_stddev({2, 4, 4, 4, 5, 5, 7, 9}) == Approx(2));
  CHECK(population_stddev({5}) == 0);
  CHECK(relative_change_percent({"m", {200}, {190}}) == Approx(-5));
  CHECK(table_change({"x%", {20}, {25}}) == Approx(5));
}
