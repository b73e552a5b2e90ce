// A tree URL with credentials ("https://robot:token@host/...") reaches the report through its url field, the
// reproduce block (`bisectctl tree add NAME URL`) and a job file quoting a URL: none of them may mail the token.
#include "fixtures.hpp"
#include "report/recipients.hpp"
#include "report/report.hpp"

#include <catch2/catch.hpp>

using namespace bisectd::report;

TEST_CASE("report::render_report strips URL credentials from the reproduce block and the job file",
          "[report][hostile]") {
  ReportInput input = bisectd::report::testing::regression_input();
  input.url = "https://robot:s3cret-token@git.example.org/linux.git";
  // What daemon/reporting builds: the tree's URL shell-quoted in `tree add`.
  input.reproduce = {"bisectctl tree add linux-next 'https://robot:s3cret-token@git.example.org/linux.git' "
                     "--branch master --job job.yaml",
                     "bisectctl results f6eccb4300ab"};
  input.job_yaml = "name: fetchy\nbuild: {command: [git, clone, 'https://ci:0th3r-token@bench.example.org/b.git']}\n";
  std::string body = render_report(input, Recipients{}).body;
  CHECK(body.find("s3cret") == std::string::npos);
  CHECK(body.find("0th3r") == std::string::npos);
  CHECK(body.find("robot:") == std::string::npos); // the user name too ("robot" alone is in the signature)
  CHECK(body.find("        bisectctl tree add linux-next 'https://git.example.org/linux.git' --branch master "
                  "--job job.yaml\n") != std::string::npos);
  CHECK(body.find("'https://bench.example.org/b.git'") != std::string::npos);
}
