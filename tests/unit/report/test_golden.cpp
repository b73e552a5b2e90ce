// Golden-file tests of whole report mails. BISECTD_UPDATE_GOLDEN=1 rewrites tests/golden/report/*.eml.

#include "fixtures.hpp"
#include "report/recipients.hpp"
#include "report/report.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace bisectd::report;

namespace {

std::string golden_path(const std::string& name) {
  return std::string(BISECTD_SOURCE_DIR) + "/tests/golden/report/" + name + ".eml";
}

// The golden files are stored with LF line ends (git-friendly); the CRLF form is checked separately.
std::string to_lf(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;
    }
    out += text[i];
  }
  return out;
}

void check_golden(const std::string& name, const ReportInput& input, bool private_tree) {
  Recipients recipients = compute_recipients(
    input.culprit, {"Perf Team <perf@example.org>"}, {"linux-mm@kvack.org", "LKML <linux-kernel@vger.kernel.org>"},
    {"Johannes Weiner <hannes@cmpxchg.org>", "cgroups@vger.kernel.org"}, private_tree);
  std::string rendered = render_report(input, recipients).render();
  CHECK(rendered.find("\n") == rendered.find("\r\n") + 1); // CRLF from the first line on
  std::string actual = to_lf(rendered);
  const char* update = std::getenv("BISECTD_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path(name), std::ios::binary) << actual;
  }
  std::ifstream file(golden_path(name), std::ios::binary);
  INFO("golden file " << golden_path(name) << " (BISECTD_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(file.good());
  std::stringstream expected;
  expected << file.rdbuf();
  CHECK(actual == expected.str());
}

} // namespace

TEST_CASE("report golden: regression", "[report][golden]") {
  check_golden("regression", bisectd::report::testing::regression_input(), false);
}

TEST_CASE("report golden: improvement", "[report][golden]") {
  check_golden("improvement", bisectd::report::testing::improvement_input(), false);
}

TEST_CASE("report golden: set answer", "[report][golden]") { check_golden("set-answer", bisectd::report::testing::set_input(), false); }

TEST_CASE("report golden: layout artefact", "[report][golden]") {
  check_golden("layout-artefact", bisectd::report::testing::layout_input(), false);
}

TEST_CASE("report golden: shared binary (real parent, same binary as, one shift)", "[report][golden]") {
  check_golden("shared-binary", bisectd::report::testing::shared_binary_input(), false);
}

TEST_CASE("report golden: no culprit with high confidence (private)", "[report][golden]") {
  check_golden("not-confident", bisectd::report::testing::not_confident_input(), true);
}

TEST_CASE("report golden: monitor and perf rows, LKP's order, capped table, unavailable monitor", "[report][golden]") {
  check_golden("monitors", bisectd::report::testing::monitors_input(), false);
}

TEST_CASE("report golden: the full table (bisectctl report ID --all)", "[report][golden]") {
  ReportInput input = bisectd::report::testing::monitors_input();
  input.row_cap = 0;
  check_golden("monitors-all", input, false);
}
