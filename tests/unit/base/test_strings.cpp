#include "base/strings.hpp"
#include "base/units.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bisectd;

TEST_CASE("base::is_valid_name", "[base]") {
  CHECK(base::is_valid_name("linux-next"));
  CHECK(base::is_valid_name("tip.x86_core"));
  CHECK_FALSE(base::is_valid_name(""));
  CHECK_FALSE(base::is_valid_name("-x"));
  CHECK_FALSE(base::is_valid_name("Linux"));
  CHECK_FALSE(base::is_valid_name("a b"));
  CHECK_FALSE(base::is_valid_name("a;rm"));
}

TEST_CASE("base::shell_quote", "[base]") {
  CHECK(base::shell_quote("plain-arg_1.2") == "plain-arg_1.2");
  CHECK(base::shell_quote("") == "''");
  CHECK(base::shell_quote("a b") == "'a b'");
  CHECK(base::shell_quote("it's") == "'it'\\''s'");
  CHECK(base::shell_quote("$(reboot)") == "'$(reboot)'");
}

TEST_CASE("base::parse_duration and parse_percent", "[base]") {
  using namespace std::chrono_literals;
  CHECK(base::parse_duration("300s").value() == 300s);
  CHECK(base::parse_duration("5m").value() == 300s);
  CHECK(base::parse_duration("1h").value() == 3600s);
  CHECK(base::parse_duration("250ms").value() == 250ms);
  CHECK(base::parse_duration("90").value() == 90s);
  CHECK_FALSE(base::parse_duration("abc"));
  CHECK_FALSE(base::parse_duration("-3s"));
  CHECK(base::parse_percent("2%").value() == Approx(0.02));
  CHECK(base::parse_percent("0.5").value() == Approx(0.5));
  CHECK_FALSE(base::parse_percent("x%"));
}

TEST_CASE("base::format_duration and signed_percent: the one formatter of each, for mail, CLI and pages", "[base]") {
  using namespace std::chrono_literals;
  CHECK(base::format_duration(1500ms) == "1.5s");
  CHECK(base::format_duration(12s) == "12.0s");
  CHECK(base::format_duration(75s) == "1m15s");
  CHECK(base::format_duration(600s) == "10m");
  CHECK(base::format_duration(3600s) == "1h"); // a bisection's machine time reads the same in `show` and the mail
  CHECK(base::format_duration(7260s) == "2h01m");
  CHECK(base::signed_percent(-0.152) == "-15.2%");
  CHECK(base::signed_percent(0.05) == "+5.0%");
  CHECK(base::signed_percent(std::nan("")) == "n/a");
}

TEST_CASE("base::same_secret: equal secrets only, never an empty one", "[base]") {
  CHECK(base::same_secret("Bearer s3cret", "Bearer s3cret"));
  CHECK_FALSE(base::same_secret("Bearer s3cret", "Bearer s3creT"));
  CHECK_FALSE(base::same_secret("Bearer s3cret", "Bearer s3cre"));
  CHECK_FALSE(base::same_secret("Bearer s3cret", "Bearer s3cret "));
  CHECK_FALSE(base::same_secret("", ""));
}

TEST_CASE("base::split_lines drops CR and the trailing empty line", "[base]") {
  auto lines = base::split_lines("a\r\nb\n\nc\n");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "a");
  CHECK(lines[2].empty());
  CHECK(lines[3] == "c");
}
