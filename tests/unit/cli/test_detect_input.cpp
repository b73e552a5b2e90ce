#include "cli/detect_input.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using namespace bisectd::cli;

namespace {

std::string error_of(std::string_view text) {
  auto input = parse_detect_input(text, "s.in");
  REQUIRE_FALSE(input);
  CHECK(input.error().code != ErrorCode::invalid_input); // bad files exit 1, not 2
  return input.error().message;
}

} // namespace

TEST_CASE("detect input: JSON values", "[cli][detect]") {
  auto input = parse_detect_input(R"({"values": [1, 2.5, -3e2]})", "s.json");
  REQUIRE(input);
  CHECK_FALSE(input->has_ids);
  REQUIRE(input->points.size() == 3);
  CHECK(input->points[1].id.empty());
  CHECK(input->points[1].samples == std::vector<double>{2.5});
  CHECK(input->points[2].samples == std::vector<double>{-300.0});
}

TEST_CASE("detect input: JSON commits with samples", "[cli][detect]") {
  auto input = parse_detect_input(
    R"( {"commits": [{"id": "abc", "samples": [10, 11]}, {"id": 7, "samples": []}, {"id": "def", "samples": [9]}]})",
    "s.json");
  REQUIRE(input);
  CHECK(input->has_ids);
  REQUIRE(input->points.size() == 3);
  CHECK(input->points[0].id == "abc");
  CHECK(input->points[0].samples == std::vector<double>{10, 11});
  CHECK(input->points[1].id == "7");
  CHECK(input->points[1].samples.empty());
  CHECK(input->points[2].id == "def");
}

TEST_CASE("detect input: JSON errors name the path", "[cli][detect]") {
  CHECK(error_of(R"({"values": [1, "2"]})") == "s.in: values[1]: expected a number, got string");
  CHECK(error_of(R"({"commits": [{"id": "a", "samples": [1]}, {"samples": [2]}]})") == "s.in: commits[1].id: missing");
  CHECK(error_of(R"({"commits": [{"id": "a", "samples": [1, null]}]})") ==
        "s.in: commits[0].samples[1]: expected a number, got null");
  CHECK(error_of(R"({"commits": [{"id": "a"}]})") == "s.in: commits[0].samples: missing");
  CHECK(error_of(R"({"commits": [{"id": "a", "samples": [1]}, {"id": "a", "samples": [2]}]})") ==
        "s.in: commits[1].id: 'a' repeats commits[0]");
  CHECK(error_of(R"({"commits": {}})") == "s.in: commits: expected an array, got object");
  CHECK(error_of(R"({"series": []})") == "s.in: expected an object with either \"values\" or \"commits\"");
  CHECK(error_of(R"([1, 2])") == "s.in: expected an object with either \"values\" or \"commits\"");
  std::string broken = error_of("{\"values\": [1,\n 2,,]}");
  CHECK(broken.rfind("s.in: invalid JSON: parse error at line 2", 0) == 0);
}

TEST_CASE("detect input: CSV one value per line", "[cli][detect]") {
  auto input = parse_detect_input("# run of 2026-11-29\nops_per_sec\n100\n\n101.5\r\n+99\n", "s.csv");
  REQUIRE(input);
  CHECK_FALSE(input->has_ids);
  REQUIRE(input->points.size() == 3);
  CHECK(input->points[0].samples == std::vector<double>{100});
  CHECK(input->points[1].samples == std::vector<double>{101.5});
  CHECK(input->points[2].samples == std::vector<double>{99});
}

TEST_CASE("detect input: CSV commit,value lines gather repeated commits", "[cli][detect]") {
  auto input = parse_detect_input("commit,value\nabc,10\nabc,11\ndef, 20\n\"ghi\",30\nabc,12\n", "s.csv");
  REQUIRE(input);
  CHECK(input->has_ids);
  REQUIRE(input->points.size() == 3);
  CHECK(input->points[0].id == "abc");
  CHECK(input->points[0].samples == std::vector<double>{10, 11, 12});
  CHECK(input->points[1].id == "def");
  CHECK(input->points[1].samples == std::vector<double>{20});
  CHECK(input->points[2].id == "ghi");
}

TEST_CASE("detect input: CSV errors name file and line", "[cli][detect]") {
  CHECK(error_of("a,1\nb,2\nc,x\n") == "s.in:3: 'x' is not a number");
  CHECK(error_of("1\n2\n3,4\n") == "s.in:3: expected 1 field (value) like line 1, found 2");
  CHECK(error_of("a,1\n\n2\n") == "s.in:3: expected 2 fields (commit,value) like line 1, found 1");
  CHECK(error_of("a,1,m,b,x\n") == "s.in:1: expected 'value', 'commit,value', 'commit,value,machine' or "
                                   "'commit,value,machine,boot', found 5 fields");
  CHECK(error_of("a,1,m\nb,2\n") == "s.in:2: expected 3 fields (commit,value,machine) like line 1, found 2");
  CHECK(error_of("a,1\n,2\n") == "s.in:2: empty commit id");
  CHECK(error_of("1\nnan\n") == "s.in:2: 'nan' is not a number");
  CHECK(error_of("12x\n") == "s.in:1: '12x' is not a number"); // not a header: starts with a digit
  CHECK(error_of("value\n") == "s.in: no values");
  CHECK(error_of("  \n") == "s.in: is empty");
}

TEST_CASE("detect input: optional machine and boot", "[cli][detect]") {
  auto json = parse_detect_input(R"({"commits": [{"id": "a", "samples": [1, 2], "machine": "box1", "boot": "b1"},
    {"id": "b", "samples": [3, 4], "machines": ["box1", "box2"], "boots": ["b2", "b3"]},
    {"id": "c", "samples": [5]}]})",
                                 "s.json");
  REQUIRE(json);
  CHECK(json->has_lab);
  REQUIRE(json->points[0].origins.size() == 2);
  CHECK(json->points[0].origins[1].machine == "box1");
  CHECK(json->points[0].origins[1].boot == "b1");
  CHECK(json->points[1].origins[1].machine == "box2");
  CHECK(json->points[1].origins[1].boot == "b3");
  CHECK(json->points[2].origins.empty()); // unknown lab for this commit only
  auto csv = parse_detect_input("commit,value,machine,boot\na,1,box1,b1\na,2,box2,\nb,3,box1,b2\n", "s.csv");
  REQUIRE(csv);
  CHECK(csv->has_lab);
  REQUIRE(csv->points.size() == 2);
  REQUIRE(csv->points[0].origins.size() == 2);
  CHECK(csv->points[0].origins[1].machine == "box2");
  CHECK(csv->points[0].origins[1].boot.empty());
  auto three = parse_detect_input("a,1,box1\nb,2,box2\n", "s.csv");
  REQUIRE(three);
  CHECK(three->points[1].origins[0].machine == "box2");
  CHECK_FALSE(parse_detect_input("a,1\nb,2\n", "s.csv")->has_lab); // old inputs still work
  CHECK(error_of(R"({"commits": [{"id": "a", "samples": [1, 2], "machines": ["x"]}]})") ==
        "s.in: commits[0].machines: expected an array of 2 strings (one per sample)");
  CHECK(error_of(R"({"commits": [{"id": "a", "samples": [1], "boot": 3}]})") ==
        "s.in: commits[0].boot: expected a string");
  CHECK(error_of(R"({"commits": [{"id": "a", "samples": [1], "boot": "x", "boots": ["x"]}]})") ==
        "s.in: commits[0]: give either \"boot\" or \"boots\", not both");
}

TEST_CASE("detect input: numbers", "[cli][detect]") {
  CHECK(parse_number("1e3") == 1000.0);
  CHECK(parse_number("-0.5") == -0.5);
  CHECK_FALSE(parse_number(""));
  CHECK_FALSE(parse_number("inf"));
  CHECK_FALSE(parse_number("1.0.0"));
}
