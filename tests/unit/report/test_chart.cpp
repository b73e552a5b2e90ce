#include "base/strings.hpp"
#include "report/chart.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bisectd;
using namespace bisectd::report;

namespace {

std::vector<ChartPoint> step_points() {
  std::vector<ChartPoint> points;
  for (std::size_t position : {0U, 5U, 7U, 8U, 9U, 20U}) {
    bool bad = position >= 8;
    for (double offset : {-1.0, 0.0, 1.0}) {
      points.push_back({position, bad ? (position == 8 ? "cccccccccccc" : "dddddddddd") : "aaaaaaaaaa",
                        (bad ? 900.0 : 1000.0) + offset, bad});
    }
  }
  return points;
}

std::size_t count(const std::string& text, char c) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), c));
}

} // namespace

TEST_CASE("report::ascii_chart draws good '+', bad 'O' and marks the culprit", "[report][chart]") {
  std::string chart = ascii_chart(step_points(), "bench.ops_per_sec", 72, 12);
  auto lines = base::split_lines(chart);
  CHECK(base::trim(lines.at(0)) == "bench.ops_per_sec");
  // 3 good commits and 3 bad ones, 3 samples each, 1-unit noise: some samples share a cell, none vanish entirely.
  std::string grid;
  for (const auto& line : lines) {
    if (line.find('|') != std::string::npos) {
      grid += line;
    }
  }
  CHECK(count(grid, '+') >= 3);
  CHECK(count(grid, 'O') >= 3);
  // Good samples sit above bad ones (higher values are higher rows).
  CHECK(chart.find('+') < chart.find('O'));
  // The '^' is in the column of the first bad commit's samples, and its sha is named.
  std::size_t caret_line = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find('^') != std::string::npos) {
      caret_line = i;
    }
  }
  REQUIRE(caret_line > 0);
  std::size_t column = lines[caret_line].find('^');
  bool bad_in_column = false;
  for (std::size_t i = 0; i < caret_line; ++i) {
    bad_in_column = bad_in_column || (lines[i].size() > column && lines[i][column] == 'O');
  }
  CHECK(bad_in_column);
  CHECK(lines.at(caret_line + 1).find("culprit cccccccccc") != std::string::npos);
  for (const auto& line : lines) {
    CHECK(line.size() <= 72);
  }
}

TEST_CASE("report::ascii_chart edge cases", "[report][chart]") {
  CHECK(ascii_chart({}, "m", 72, 12).empty());
  CHECK(ascii_chart({{0, "a", NAN, false}}, "m", 72, 12).empty());
  std::string flat = ascii_chart({{3, "a", 5.0, false}, {3, "a", 5.0, false}}, "m", 10, 2);
  CHECK(flat.find('+') != std::string::npos);
  CHECK(flat.find('^') == std::string::npos); // no bad sample, no culprit mark
  std::string zero = ascii_chart({{0, "a", 0.0, false}, {1, "b", 0.0, true}}, "m", 40, 6);
  CHECK(zero.find('O') != std::string::npos);
}

// Found by tests/fuzz/report: samples near the ends of double's range (a benchmark printing 1e308) made the tick
// loop run for minutes. Such values are left out of the chart; the rest is still drawn.
TEST_CASE("report::ascii_chart: values too large to chart are left out, quickly", "[report][chart]") {
  std::vector<ChartPoint> points{{0, "a", 1e308, false}, {1, "b", -1.7e308, false}, {2, "c", 5.0, true},
                                 {3, "d", 6.0, true}, {4, "e", 1e300, true}};
  auto chart = ascii_chart(points, "bench.ops", 60, 10);
  CHECK_FALSE(chart.empty());
  CHECK(chart.find('O') != std::string::npos);
  CHECK(ascii_chart({{0, "a", 1e308, false}, {1, "b", -1e308, true}}, "bench.ops", 60, 10).empty());
}
