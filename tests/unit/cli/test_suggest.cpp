// "Did you mean": the edit distance, the nearness rule, and bisectctl's one-line errors for mistyped commands and
// options (no server needed: the parser rejects them first).
#include "cli/suggest.hpp"
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

using namespace bisectd::cli;
using bisectd::cli::test::run_cli;

TEST_CASE("edit_distance counts insertions, deletions, substitutions and swaps", "[cli][suggest]") {
  CHECK(edit_distance("status", "status") == 0);
  CHECK(edit_distance("stauts", "status") == 1); // a swap of neighbours
  CHECK(edit_distance("statu", "status") == 1);
  CHECK(edit_distance("stXtus", "status") == 1);
  CHECK(edit_distance("", "show") == 4);
  CHECK(edit_distance("show", "tree") == 4);
}

TEST_CASE("nearest_word names only close words", "[cli][suggest]") {
  std::vector<std::string> known{"show", "status", "bisect", "bisections"};
  CHECK(nearest_word("stauts", known) == std::optional<std::string>("status"));
  CHECK(nearest_word("shwo", known) == std::optional<std::string>("show"));
  CHECK(nearest_word("bisetc", known) == std::optional<std::string>("bisect"));
  CHECK_FALSE(nearest_word("frobnicate", known));
  CHECK_FALSE(nearest_word("xy", known));
}

TEST_CASE("bisectctl names a mistyped command and its nearest one", "[cli][suggest]") {
  auto top = run_cli({"stauts"});
  CHECK(top.code == 2);
  CHECK(top.err == "bisectctl: error: unknown command 'stauts' (did you mean 'status'?)\n");
  auto nested = run_cli({"tree", "shwo", "demo"});
  CHECK(nested.code == 2);
  CHECK(nested.err == "bisectctl: error: unknown command 'tree shwo' (did you mean 'tree show'?)\n");
  auto far = run_cli({"--server", "http://127.0.0.1:1", "frobnicate"});
  CHECK(far.err == "bisectctl: error: unknown command 'frobnicate'\n");
}

TEST_CASE("bisectctl names a mistyped option with the command it follows", "[cli][suggest]") {
  auto r = run_cli({"status", "--jsn"});
  CHECK(r.code == 2);
  CHECK(r.err == "bisectctl: error: status: unknown option '--jsn' (did you mean '--json'?)\n");
  auto value = run_cli({"bisect", "start", "--tre=demo"});
  CHECK(value.err == "bisectctl: error: bisect start: unknown option '--tre' (did you mean '--tree'?)\n");
}

TEST_CASE("bisectctl keeps the parser's message when every word is known", "[cli][suggest]") {
  auto r = run_cli({"bisect", "start"});
  CHECK(r.code == 2);
  CHECK(r.err.find("bisect start: ") != std::string::npos);
  CHECK(r.err.find("unknown") == std::string::npos);
}

TEST_CASE("bisectctl names the commands of a group given alone", "[cli][suggest]") {
  auto r = run_cli({"machine"});
  CHECK(r.code == 2);
  CHECK(r.err == "bisectctl: error: machine: name one of its commands: release, check\n");
  auto none = run_cli({});
  CHECK(none.code == 2);
  CHECK(none.err.find("no command given (one of: ") != std::string::npos);
  CHECK(none.err.find("status") != std::string::npos);
}

TEST_CASE("bisectctl help CMD is CMD --help, and --json may come before the command", "[cli][suggest]") {
  auto help = run_cli({"help", "bisect", "start"});
  CHECK(help.code == 0);
  CHECK(help.out.find("--tree") != std::string::npos);
  CHECK(help.out == run_cli({"bisect", "start", "--help"}).out);
  auto json = run_cli({"--json", "stauts"}); // moved after the command: the typo is still what is reported
  CHECK(json.err == "bisectctl: error: unknown command 'stauts' (did you mean 'status'?)\n");
}
