// Text from a tree (subjects, logs, the daemon's errors quoting them) printed by bisectctl: escapes shown, never sent
// to the terminal; --json stays exact JSON.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using bisectd::cli::test::run_cli;

namespace bisectd::cli::test {
FakeServer& shared_server();
}
using bisectd::cli::test::shared_server;

namespace {

constexpr const char* k_pwned_shown = "\\x1b]0;pwned\\x07\\x1b[2J"; // as bisectctl prints it

bool has_control(const std::string& text, bool allow_line_breaks) {
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    bool line_break = c == '\n' || c == '\t';
    if ((byte < 0x20 && !(allow_line_breaks && line_break)) || byte == 0x7f) {
      return true;
    }
  }
  return text.find("\xc2\x9b") != std::string::npos;
}

nlohmann::json canned(const std::string& name) {
  std::ifstream in(std::string(BISECTD_SOURCE_DIR) + "/tests/unit/cli/canned/api/v1/" + name);
  return nlohmann::json::parse(in);
}

} // namespace

TEST_CASE("bisectctl show prints a tree's escapes visibly", "[cli][hostile]") {
  auto result = run_cli({"--server", shared_server().url(), "show", "66"});
  CHECK(result.code == 0);
  CHECK_FALSE(has_control(result.out, true));
  // The culprit line, the tested table's subject, an event.
  CHECK(result.out.find(std::string("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ") + k_pwned_shown + "mm: fix\n") !=
        std::string::npos);
  CHECK(result.out.find(std::string("  ") + k_pwned_shown + "\n") != std::string::npos);
  CHECK(result.out.find(std::string("built ") + k_pwned_shown + " \\u009b31m\\x7f\n") != std::string::npos);
}

TEST_CASE("bisectctl show --json stays the exact JSON", "[cli][hostile]") {
  auto result = run_cli({"--server", shared_server().url(), "show", "66", "--json"});
  CHECK(result.code == 0);
  CHECK_FALSE(has_control(result.out, true));
  CHECK(nlohmann::json::parse(result.out) == canned("bisections/66.json"));
  CHECK(result.out.find("\\u001b]0;pwned\\u0007\\u001b[2J") != std::string::npos);
  CHECK(result.out.find(" \\u009b31m\\u007f") != std::string::npos); // C1 and DEL as JSON escapes too
}

TEST_CASE("bisectctl logs keeps lines and tabs, shows the escapes", "[cli][hostile]") {
  auto result = run_cli({"--server", shared_server().url(), "logs", "build", "66"});
  CHECK(result.code == 0);
  CHECK(result.out == std::string("make: entering\n") + k_pwned_shown + "\tdone\n\\u009b31m");
}

TEST_CASE("bisectctl prints a daemon's error with its escapes shown", "[cli][hostile]") {
  auto result = run_cli({"--server", shared_server().url(), "show", "67"});
  CHECK(result.code == 1);
  CHECK(result.err == std::string("bisectctl: error: bisection 67: culprit ") + k_pwned_shown + " refused\n");
}

TEST_CASE("bisectctl refuses a --notify entry with CR/LF for tree set too", "[cli][hostile]") {
  auto result = run_cli(
    {"--server", shared_server().url(), "tree", "set", "demo", "--notify", "a@example.org\r\nBcc: victim@evil.org"});
  CHECK(result.code == 2);
  CHECK(result.err == "bisectctl: error: --notify 'a@example.org  Bcc: victim@evil.org': not a mail address "
                      "(one line with an '@')\n");
}
