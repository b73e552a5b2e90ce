#include "cli/exit_codes.hpp"
#include "cli/validate.hpp"
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace bisectd;
using namespace bisectd::cli;
using bisectd::cli::test::run_cli;

namespace {

// Exactly one line, the error line, on stderr.
bool one_error_line(const std::string& err) {
  return err.rfind("bisectctl: error: ", 0) == 0 && std::count(err.begin(), err.end(), '\n') == 1;
}

} // namespace

TEST_CASE("cli::exit_code_for maps error kinds to exit codes", "[cli]") {
  CHECK(exit_code_for(Error{ErrorCode::invalid_input, "x"}) == ExitCode::usage);
  CHECK(exit_code_for(Error{ErrorCode::cancelled, "x"}) == ExitCode::interrupted);
  CHECK(exit_code_for(Error{ErrorCode::not_found, "x"}) == ExitCode::failure);
  CHECK(exit_code_for(Error{ErrorCode::unreachable, "x"}) == ExitCode::failure);
  CHECK(exit_code_for(Error{ErrorCode::generic, "x"}) == ExitCode::failure);
  CHECK(static_cast<int>(ExitCode::interrupted) == 130);
  CHECK(error_line(Error{ErrorCode::generic, "a\nb"}) == "bisectctl: error: a b");
}

TEST_CASE("cli validation of names, URLs, thresholds and ids", "[cli]") {
  CHECK(validate_name("demo-1.x_y", "tree name"));
  for (const char* bad : {"", "Demo", "-x", ".x", "a b", "a/b", "a;b"}) {
    auto status = validate_name(bad, "tree name");
    REQUIRE_FALSE(status);
    CHECK(status.error().code == ErrorCode::invalid_input);
  }
  CHECK(validate_url("/srv/git/linux"));
  CHECK(validate_url("https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git"));
  for (const char* bad : {"", "/x y", "/x;rm", "$(id)", "`id`", "-oProxy", "ext::sh -c x", "/a|b"}) {
    auto status = validate_url(bad);
    REQUIRE_FALSE(status);
    CHECK(status.error().code == ErrorCode::invalid_input);
  }
  CHECK(validate_rev("HEAD~3", "--good"));
  CHECK(validate_rev("v6.1^{commit}", "--good"));
  CHECK_FALSE(validate_rev("a b", "--good"));
  CHECK_FALSE(validate_rev("--all", "--good"));
  CHECK(parse_threshold("2%") == 0.02);
  CHECK_FALSE(parse_threshold("150%"));
  CHECK_FALSE(parse_threshold("two"));
  CHECK(parse_id("42") == 42);
  CHECK_FALSE(parse_id("0"));
  CHECK_FALSE(parse_id("4x"));
}

TEST_CASE("bisectctl usage errors exit 2 with one error line", "[cli]") {
  const std::vector<std::vector<std::string>> cases = {
    {"tree", "add", "Bad_Name", "/srv/x", "--branch", "master", "--job", "/nonexistent"},
    {"tree", "add", "demo", "/srv/x y", "--branch", "master", "--job", "/nonexistent"},
    {"tree", "add", "demo", "/srv/x;reboot", "--branch", "master", "--job", "/nonexistent"},
    {"tree", "add", "demo", "/srv/x", "--job", "/nonexistent"}, // --branch missing
    {"tree", "add", "demo", "/srv/x", "--branch", "m", "--job", "/j", "--notify", "nobody"},
    {"tree", "add", "demo", "/srv/x", "--branch", "m", "--job", "/j", "--poll-interval", "-5"},
    {"tree", "remove", "UPPER"},
    {"tree"}, // no subcommand
    {"frobnicate"},
    {},
    {"bisect", "start", "--tree", "demo", "--good", "v1"}, // --bad missing
    {"bisect", "start", "--tree", "de mo", "--good", "v1", "--bad", "v2"},
    {"bisections", "--state", "sleeping"},
    {"show", "abc"},
    {"wait", "3", "--timeout", "0"},
    {"detect", "--input", "x.csv", "--threshold", "lots"},
    {"noise", "--tree", "de mo"},
  };
  for (const auto& args : cases) {
    INFO("args: " << args.size() << " " << (args.empty() ? "" : args.front()));
    auto result = run_cli(args);
    CHECK(result.code == 2);
    CHECK(one_error_line(result.err));
    CHECK(result.out.empty());
  }
}

TEST_CASE("bisectctl compare and results --metric refuse bad input before asking the daemon", "[cli]") {
  // No --server: a usage error must not need a daemon.
  std::vector<std::vector<std::string>> cases = {
    {"results", "0123456", "--metric", "proc-[vm"}, // unclosed set
    {"results", "0123456", "--metric", "time.\\"}, // trailing escape
    {"compare", "0123456"},                          // B missing
    {"compare", "0123456", "master"},                // a ref without --tree
    {"compare", "0123456", "abcdef0", "--job", "de mo"},
    {"compare", "0123456", "abcdef0", "--tree", "de mo"},
  };
  for (const auto& args : cases) {
    INFO("args: " << args.back());
    auto result = run_cli(args);
    CHECK(result.code == 2);
    CHECK(one_error_line(result.err));
    CHECK(result.out.empty());
  }
  auto glob = run_cli({"results", "0123456", "--metric", "proc-[vm"});
  CHECK(glob.err == "bisectctl: error: --metric 'proc-[vm': the '[' at position 6 opens a set that is empty or never "
                    "closed\n");
  auto ref = run_cli({"compare", "0123456", "master"});
  CHECK(ref.err.find("B 'master'") != std::string::npos);
  CHECK(run_cli({"--help"}).out.find("compare") != std::string::npos);
}

TEST_CASE("bisectctl --help exits 0 and lists the commands", "[cli]") {
  auto result = run_cli({"--help"});
  CHECK(result.code == 0);
  for (const char* command : {"tree", "bisect", "bisections", "show", "report", "wait", "status", "machines", "results",
                              "noise", "midpoint", "detect"}) {
    CHECK(result.out.find(command) != std::string::npos);
  }
}

TEST_CASE("bisectctl names an unreadable job file and exits 1", "[cli]") {
  auto result = run_cli({"tree", "add", "demo", "/srv/x", "--branch", "master", "--job", "/nonexistent/job.yaml"});
  CHECK(result.code == 1);
  CHECK(result.err == "bisectctl: error: job file /nonexistent/job.yaml: No such file or directory\n");
}

TEST_CASE("bisectctl reports an unreachable daemon with its URL", "[cli]") {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  auto result = run_cli({"--server", "http://127.0.0.1:1", "status"});
  CHECK(result.code == 1);
  CHECK(result.err.rfind("bisectctl: error: cannot reach bisectd at http://127.0.0.1:1: ", 0) == 0);
  CHECK(one_error_line(result.err));
}
