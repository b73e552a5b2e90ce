#include "cli/format.hpp"
#include "cli/table.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace bisectd::cli;

TEST_CASE("cli::Table pads columns and right-aligns numbers", "[cli]") {
  Table table({"ID", "NAME", "RUNS"}, {Align::right, Align::left, Align::right});
  table.add_row({"3", "demo", "24"});
  table.add_row({"12", "a-much-longer-name", "7"});
  CHECK(table.render() == "ID  NAME                RUNS\n"
                          " 3  demo                  24\n"
                          "12  a-much-longer-name     7\n");
}

TEST_CASE("cli::Table has no trailing spaces and fills missing cells", "[cli]") {
  Table table({"A", "B"});
  table.add_row({"x"});
  table.add_row({"yy", "z"});
  CHECK(table.render() == "A   B\nx\nyy  z\n");
  CHECK(table.rows() == 2);
  CHECK_THROWS_AS(table.add_row({"1", "2", "3"}), std::invalid_argument);
}

TEST_CASE("cli::Table measures UTF-8 text in code points", "[cli]") {
  CHECK(display_width("±0.8%") == 5);
  CHECK(display_width("Jörg") == 4);
  Table table({"WHO", "X"});
  table.add_row({"Jörg", "1"});
  table.add_row({"Anna", "2"});
  CHECK(table.render() == "WHO   X\nJörg  1\nAnna  2\n");
}

TEST_CASE("cli format helpers", "[cli]") {
  nlohmann::json object = {{"sha", "0123456789abcdef0123456789abcdef01234567"},
                           {"ref", "v1.0"},
                           {"none", nullptr},
                           {"n", 24},
                           {"x", 1234.5},
                           {"flag", true},
                           {"at", "2026-11-29T22:00:00Z"}};
  CHECK(field_sha(object, "sha") == "0123456789");
  CHECK(field_sha(object, "ref") == "v1.0");
  CHECK(field_sha(object, "none") == "-");
  CHECK(field_text(object, "missing") == "-");
  CHECK(field_text(object, "n") == "24");
  CHECK(field_text(object, "x") == "1234.5");
  CHECK(field_text(object, "flag") == "yes");
  CHECK(format_probability(0.99734) == "0.997");
  CHECK(format_probability(std::nullopt) == "-");
  CHECK(format_number(0.0123) == "0.0123");

  std::int64_t at = *parse_iso8601("2026-11-29T22:00:00Z");
  CHECK(parse_iso8601("2026-11-29T23:00:00+01:00") == at);
  CHECK(parse_iso8601("2026-11-29T22:00:00.123Z") == at);
  CHECK_FALSE(parse_iso8601("yesterday"));
  CHECK(format_age(object, "at", at + 30) == "30s");
  CHECK(format_age(object, "at", at + 7200) == "2h");
  CHECK(format_age(object, "at", at + 3 * 86400) == "3d");
  CHECK(format_age(object, "none", at) == "-");
}
