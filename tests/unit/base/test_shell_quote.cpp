// base::shell_quote, property-style against a real /bin/sh: every hostile string, quoted, reaches the program as
// exactly the same bytes, as one word, and runs nothing. This is the quoting every command sent to a remote shell
// (the ssh backend) goes through.

#include "base/process.hpp"
#include "base/strings.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace bisectd;

namespace {

// What `sh -c SCRIPT` prints on stdout (exit 0 required).
std::string sh(const std::string& script) {
  base::Command cmd;
  cmd.argv = {"/bin/sh", "-c", script};
  cmd.timeout = std::chrono::seconds(20);
  auto status = base::run(cmd);
  REQUIRE(status.has_value());
  INFO("script: " << script << "\nstderr: " << status->err);
  REQUIRE(status->ok());
  return status->out;
}

// The words a shell sees: each NUL-terminated by printf.
std::string words_of(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& arg : args) {
    out += arg;
    out += '\0';
  }
  return out;
}

const std::vector<std::string>& hostile() {
  static const std::vector<std::string> strings{
    "",
    " ",
    "a b",
    "  two  spaces  ",
    "it's",
    "'",
    "''",
    "\"",
    "\"quoted\"",
    "back\\slash",
    "\\",
    "trailing\\",
    "$(touch PWNED)",
    "`touch PWNED`",
    "$HOME",
    "${HOME}",
    "$((1+1))",
    "$",
    "$'x'",
    "a;touch PWNED",
    "a&&b",
    "a||b",
    "a|b",
    "a&",
    "a>PWNED",
    "<in",
    "a\nb",
    "\n",
    "line\n",
    "\t",
    "tab\there",
    "*",
    "?",
    "[a-z]*",
    "~",
    "~root",
    "-n",
    "-e",
    "--",
    "-",
    "--help",
    "a=b",
    "PATH=/nonexistent",
    "#comment",
    "a #b",
    "!",
    "!!",
    "{a,b}",
    "{}",
    "if",
    "then",
    "fi",
    "(",
    ")",
    "( )",
    "a(b)",
    "é",
    "日本語",
    "\xff\xfe",
    "\x01\x02\x7f",
    "%s",
    "%",
    "@",
    "a'b\"c$d`e\\f",
    "'$(touch PWNED)'",
    "\"$(touch PWNED)\"",
    "\r\n",
    "ending '",
  };
  return strings;
}

// Random strings over an alphabet of shell metacharacters, fixed seed (reproducible).
std::vector<std::string> random_hostile(int count) {
  static const std::string alphabet = " \t\n'\"\\$`;&|<>()*?[]{}~#!=%-_.:/aZ9\x7f\x80\xc3\xa9";
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> length(0, 12);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    std::string s;
    for (int n = length(rng); n > 0; --n) {
      s += alphabet[pick(rng)];
    }
    out.push_back(s);
  }
  return out;
}

} // namespace

TEST_CASE("shell_quote: every hostile string reaches /bin/sh's printf unchanged, as one word", "[base][shell]") {
  auto cwd = std::filesystem::temp_directory_path() / ("shell-quote-" + std::to_string(::getpid()));
  std::filesystem::create_directories(cwd);
  auto strings = hostile();
  for (auto& s : random_hostile(300)) {
    strings.push_back(s);
  }
  for (const auto& s : strings) {
    auto got = sh("cd " + base::shell_quote(cwd.string()) + " && printf '%s\\0' " + base::shell_quote(s));
    CHECK(got == words_of({s}));
  }
  // Nothing the strings asked for ran: no file was created, no glob expanded to one.
  CHECK(std::filesystem::is_empty(cwd));
  std::filesystem::remove_all(cwd);
}

TEST_CASE("shell_quote: an argv joined with spaces keeps its word boundaries", "[base][shell]") {
  auto strings = hostile();
  std::vector<std::string> argv(strings.begin(), strings.end());
  std::string line = "printf '%s\\0'";
  for (const auto& arg : argv) {
    line += " " + base::shell_quote(arg);
  }
  CHECK(sh(line) == words_of(argv));
  // Through two shells (ssh hands the remote command to the user's shell, which runs `sh -c`): quoting the
  // quoted line once more still delivers the same words.
  CHECK(sh("/bin/sh -c " + base::shell_quote(line)) == words_of(argv));
}

TEST_CASE("shell_quote: a quoted word in command position is a command name, never an assignment or keyword",
          "[base][shell]") {
  // "a=b" bare would be an assignment (exit 0); quoted it is a command that does not exist (exit 127).
  for (std::string word : {"a=b", "if", "!", "{", "for", "while", "case"}) {
    base::Command cmd;
    cmd.argv = {"/bin/sh", "-c", base::shell_quote(word) + " 2>/dev/null; echo $?"};
    auto status = base::run(cmd);
    REQUIRE(status.has_value());
    INFO(word);
    CHECK(status->out == "127\n");
  }
}

TEST_CASE("shell_quote: safe words stay bare, the rest single-quoted", "[base][shell]") {
  CHECK(base::shell_quote("/usr/bin/page_fault") == "/usr/bin/page_fault");
  CHECK(base::shell_quote("--seconds") == "--seconds");
  CHECK(base::shell_quote("a=b") == "'a=b'");
  CHECK(base::shell_quote("a\nb") == "'a\nb'");
  CHECK(base::shell_quote("it's") == "'it'\\''s'");
}
