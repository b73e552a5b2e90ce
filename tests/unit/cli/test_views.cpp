// Issue #30 items 4 and 5: logs by commit, request ids in `show`, `queue`, `jobs`, the verdicts of `show` said
// plainly and `report` saying why there is no mail. Against fake_bisectd.py's canned replies.
#include "cli/cmd_queue.hpp"
#include "cli/cmd_show.hpp"
#include "cli/format.hpp"
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

using bisectd::cli::test::FakeServer;
using bisectd::cli::test::run_cli;

namespace bisectd::cli::test {
FakeServer& shared_server();
}
using bisectd::cli::test::shared_server;

namespace {

bool shows(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("show: no_change is said plainly, with the threshold and the shift's interval", "[cli][views]") {
  auto result = run_cli({"--server", shared_server().url(), "show", "40"});
  INFO(result.out);
  CHECK(result.code == 0);
  CHECK(shows(result.out,
            "verdict     no change beyond the threshold (±2%: the most likely shift is within [-0.8%, +0.6%])\n"));
  CHECK(shows(result.out, "P(no change) 0.987\n"));
  CHECK_FALSE(shows(result.out, "could be any of"));
  CHECK_FALSE(shows(result.out, "culprit "));
  CHECK_FALSE(shows(result.out, "0000000000111111111122222222223333333334")); // the search's set means nothing here
}

TEST_CASE("show: an exhausted budget says so, with the credible set", "[cli][views]") {
  auto result = run_cli({"--server", shared_server().url(), "show", "41"});
  INFO(result.out);
  CHECK(result.code == 0);
  CHECK(shows(result.out, "verdict     budget spent before one commit was certain; the first bad commit is one of:\n"
                        "  0000000000111111111122222222223333333334\n"
                        "  0000000000111111111122222222223333333335\n"));
  // a skipped commit leads to its build log by commit: a prebuild's failure has no request id
  CHECK(shows(result.out, "`bisectctl logs build COMMIT --tree demo`"));
}

TEST_CASE("show: every request's id, for `bisectctl logs`", "[cli][views]") {
  auto result = run_cli({"--server", shared_server().url(), "show", "40"});
  CHECK(shows(result.out, "requests (`bisectctl logs build|request|console ID`):\n"));
  CHECK(shows(result.out, " 7  0000000000  bisect   -        done   local           1\n"));
  CHECK(shows(result.out, " 8  4444444444  bisect   -        done   local           1\n"));
}

TEST_CASE("show: a merge's branch without change names the merge: that is a culprit, not no change", "[cli][views]") {
  nlohmann::json b = {{"id", 9},           {"state", "found"},       {"verdict", "no_change"},
                      {"culprit", "abc"},  {"p_culprit", 0.99},      {"threshold", 0.02},
                      {"merge", "abc"},    {"credible_set", {"x"}}};
  auto text = bisectd::cli::render_bisection(b, 0);
  CHECK(shows(text, "culprit     abc\n"));
  CHECK_FALSE(shows(text, "no change beyond"));
}

TEST_CASE("show: no_change from an older daemon (no threshold, no interval) still reads as a verdict", "[cli][views]") {
  nlohmann::json b = {{"id", 9}, {"state", "not_found"}, {"verdict", "no_change"},
                      {"shift", {{"estimate", 0}, {"low", 0}, {"high", 0}}}};
  CHECK(shows(bisectd::cli::render_bisection(b, 0), "verdict     no change beyond the threshold\n"));
}

TEST_CASE("report: the daemon's reason for no report is the error", "[cli][views]") {
  auto result = run_cli({"--server", shared_server().url(), "report", "40"});
  CHECK(result.code == 1);
  CHECK(result.err == "bisectctl: error: bisection 40 found no change beyond the threshold: no report is written for "
                      "no change (`bisectctl show 40` gives the numbers)\n");
}

TEST_CASE("report: a report that is not mailed says why on stderr, the mail alone on stdout", "[cli][views]") {
  auto result = run_cli({"--server", shared_server().url(), "report", "41"});
  CHECK(result.code == 0);
  CHECK(result.out == "Subject: x\r\n\r\nHello\n");
  CHECK(result.err == "(not mailed: no recipients: the tree is private and its notify list is empty)\n");
  CHECK(bisectd::cli::mail_note({{"state", "sent"}, {"why", "mailed"}}).empty());
  CHECK(bisectd::cli::mail_note(nlohmann::json()).empty()); // an older daemon says nothing
  CHECK(bisectd::cli::mail_note({{"state", "pending"}, {"why", "waiting to be mailed"}}) ==
        "(mail pending: waiting to be mailed)");
}

TEST_CASE("queue: open requests with whom they are for, their state and age", "[cli][views]") {
  auto result = run_cli({"--server", shared_server().url(), "queue"});
  INFO(result.out);
  CHECK(result.code == 0);
  CHECK(shows(result.out, "ID  TREE  JOB              COMMIT      PURPOSE          FOR          MACHINE  STATE"));
  CHECK(shows(result.out, "12  demo  demo-throughput  89abcdef01  bisect           bisection 3  local    running"));
  CHECK(shows(result.out,
              "13  demo  demo-throughput  4444444444  verify (layout)  bisection 3  -        queued (attempt 2)"));
  CHECK(shows(result.out, "14  demo  demo-throughput  aaaaaaaaaa  watch            -            -        queued"));
  auto json = run_cli({"--server", shared_server().url(), "queue", "--json"});
  CHECK(nlohmann::json::parse(json.out)["requests"].size() == 3);
  CHECK(bisectd::cli::render_queue(nlohmann::json::object(), 0) == "no queued or running requests\n");
  auto age = bisectd::cli::render_queue({{"requests", {{{"id", 1}, {"created_at", "2026-11-28T21:00:00Z"}}}}},
                                        *bisectd::cli::parse_iso8601("2026-11-28T21:12:00Z"));
  CHECK(shows(age, "12m\n"));
}

TEST_CASE("jobs: each job with the trees using it", "[cli][views]") {
  auto result = run_cli({"--server", shared_server().url(), "jobs"});
  INFO(result.out);
  CHECK(result.code == 0);
  CHECK(shows(result.out, "demo-throughput  bench.ops_per_sec  higher_is_better  ±2%        demo, demo2\n"));
  CHECK(shows(result.out, "old              -                  -                 -          - (no tree)\n"));
}

TEST_CASE("logs build COMMIT --tree: the build log of a commit, found by tree and revision", "[cli][views]") {
  FakeServer& server = shared_server();
  auto result = run_cli({"--server", server.url(), "logs", "build", "89abcdef01", "--tree", "demo", "--job", "j1"});
  CHECK(result.code == 0);
  CHECK(result.out == "cc: error: boom.c:3: bad\n");
  auto requests = server.requests();
  REQUIRE(requests.size() >= 2);
  CHECK(requests[requests.size() - 2]["path"] == "/api/v1/logs/build");
  CHECK(requests[requests.size() - 2]["query"] == "tree=demo&commit=89abcdef01&job=j1&offset=0");
  CHECK(requests.back()["query"] == "tree=demo&commit=89abcdef01&job=j1&offset=25");

  auto console = run_cli({"--server", server.url(), "logs", "console", "89abcdef01", "--tree", "demo"});
  CHECK(console.code == 2);
  CHECK(shows(console.err, "--tree works with `logs build` only"));
  auto no_tree = run_cli({"--server", server.url(), "logs", "build", "89abcdef01"});
  CHECK(no_tree.code == 2);
  CHECK(shows(no_tree.err, "(or a commit, with --tree TREE)"));
  auto job_alone = run_cli({"--server", server.url(), "logs", "build", "12", "--job", "j1"});
  CHECK(job_alone.code == 2);
}

TEST_CASE("queue and jobs are in --help", "[cli][views]") {
  auto help = run_cli({"--help"});
  CHECK(shows(help.out, "queue"));
  CHECK(shows(help.out, "jobs"));
}

TEST_CASE("wait: a search that ends without a culprit says why", "[cli][views]") {
  auto flat = run_cli({"--server", shared_server().url(), "wait", "40"});
  CHECK(flat.code == 1);
  CHECK(flat.err.ends_with("bisectctl: error: bisection 40 ended not_found: no change beyond the threshold (±2%: the "
                            "most likely shift is within [-0.8%, +0.6%])\n"));
  auto spent = run_cli({"--server", shared_server().url(), "wait", "41"});
  CHECK(spent.err.ends_with("bisectctl: error: bisection 41 ended not_found: budget spent before one commit was "
                             "certain\n"));
}
