// Issue #30 item 6: the details a sceptical maintainer looks for in a report (probabilities never rounded up to
// certainty, the culprit's diffstat, the commits the bisection skipped and why, a reproduce section without
// bisectd and the job file attached).

#include "base/strings.hpp"
#include "fixtures.hpp"
#include "mail_check.hpp"
#include "report/report.hpp"

#include <catch2/catch.hpp>

using namespace bisectd::report;

TEST_CASE("base::probability_percent never rounds up to 100%", "[report][details]") {
  using bisectd::base::probability_percent;
  CHECK(probability_percent(0.9962) == "99.6%");
  CHECK(probability_percent(0.999) == "99.9%");
  CHECK(probability_percent(0.99949) == "> 99.9%"); // %.1f would print 99.9% too, but it is above 99.9%
  CHECK(probability_percent(0.9996) == "> 99.9%");  // %.1f: "100.0%"
  CHECK(probability_percent(1.0) == "> 99.9%");
  CHECK(probability_percent(0.62) == "62.0%");
  CHECK(probability_percent(0) == "0.0%");
  CHECK(probability_percent(std::nan("")) == "n/a");
}

TEST_CASE("report: P(culprit) above 99.9% reads \"> 99.9%\" in every confidence line", "[report][details]") {
  ReportInput input = bisectd::report::testing::regression_input();
  input.p_culprit = 0.99996;
  std::string body = render_report(input, Recipients{}).body;
  CHECK(body.find("  P(culprit): > 99.9%\n") != std::string::npos);
  CHECK(body.find("100.0%") == std::string::npos);

  ReportInput set = bisectd::report::testing::set_input();
  set.p_culprit = 0.9999;
  CHECK(render_report(set, Recipients{}).body.find("P(culprit is one of the 3 commits): > 99.9%\n") !=
        std::string::npos);
}
