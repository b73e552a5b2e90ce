// The offline commands: detect on files, midpoint on a generated repository (compared with git).
#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "cli/cmd_offline.hpp"
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

using namespace bisectd;
using bisectd::cli::test::run_cli;
using bisectd::cli::test::temp_dir;

namespace {

// 40 points around 100, then 40 around 90 (deterministic wiggle, no randomness).
std::string step_series_csv(bool with_ids) {
  std::ostringstream out;
  out << (with_ids ? "commit,value\n" : "value\n");
  for (int i = 0; i < 80; ++i) {
    double value = (i < 40 ? 100.0 : 90.0) + 0.5 * std::sin(i * 1.7);
    for (int run = 0; run < (with_ids ? 2 : 1); ++run) {
      out << (with_ids ? "c" + std::to_string(i) + "," : "") << value + run * 0.1 << '\n';
    }
  }
  return out.str();
}

// A repository of `n` commits with one merge, built by one `git fast-import`; returns its directory.
std::filesystem::path make_repo(int n) {
  auto dir = temp_dir("cli-midpoint-");
  base::Command init;
  init.argv = {"git", "init", "-q", dir.string()};
  REQUIRE(base::run_checked(init));
  std::ostringstream stream;
  for (int i = 1; i <= n; ++i) {
    bool side = i > n / 2 && i <= n / 2 + 5; // five commits on a side branch, merged back
    stream << "commit refs/heads/" << (side ? "side" : "main") << "\nmark :" << i << "\n"
           << "committer T <t@example.org> " << 1700000000 + i << " +0000\ndata 3\nc" << i % 10 << "\n";
    if (i == n / 2 + 1) {
      stream << "from :" << n / 2 << "\n";
    }
    if (i == n / 2 + 6) {
      stream << "from :" << n / 2 << "\nmerge :" << n / 2 + 5 << "\n";
    }
    stream << "M 644 inline f\ndata " << std::to_string(i).size() << "\n" << i << "\n";
  }
  base::Command import;
  import.argv = {"git", "-C", dir.string(), "fast-import", "--quiet"};
  import.stdin_data = stream.str();
  REQUIRE(base::run_checked(import));
  return dir;
}

std::string git_out(const std::filesystem::path& dir, std::vector<std::string> args) {
  base::Command command;
  command.argv = {"git", "-C", dir.string()};
  command.argv.insert(command.argv.end(), args.begin(), args.end());
  auto status = base::run_checked(command);
  REQUIRE(status);
  return std::string(base::trim(status->out));
}

} // namespace

TEST_CASE("bisectctl detect finds a step in CSV and JSON output", "[cli][offline]") {
  auto dir = temp_dir("cli-detect-");
  REQUIRE(base::write_file_atomic(dir / "plain.csv", step_series_csv(false)));
  REQUIRE(base::write_file_atomic(dir / "ids.csv", step_series_csv(true)));

  auto plain = run_cli({"detect", "--input", (dir / "plain.csv").string()});
  CHECK(plain.code == 0);
  CHECK(plain.out.rfind("INDEX  DIRECTION  CHANGE  CONFIDENCE\n   40  down", 0) == 0);

  auto ids = run_cli({"detect", "--input", (dir / "ids.csv").string(), "--json"});
  REQUIRE(ids.code == 0);
  auto points = nlohmann::json::parse(ids.out)["change_points"];
  REQUIRE(points.size() == 1);
  CHECK(points[0]["index"] == 40);
  CHECK(points[0]["id"] == "c40");
  CHECK(points[0]["direction"] == "down");
  CHECK(points[0]["relative_change"].get<double>() == Approx(-0.1).margin(0.01));
  CHECK(points[0]["confidence"].get<double>() > 0.9);

  auto strict = run_cli({"detect", "--input", (dir / "plain.csv").string(), "--threshold", "20%"});
  CHECK(strict.code == 0);
  CHECK(strict.out == "no change points in 80 points\n");
}

TEST_CASE("bisectctl detect rejects bad files with exit 1", "[cli][offline]") {
  auto dir = temp_dir("cli-detect-");
  REQUIRE(base::write_file_atomic(dir / "bad.csv", "a,1\nb,oops\n"));
  auto bad = run_cli({"detect", "--input", (dir / "bad.csv").string()});
  CHECK(bad.code == 1);
  CHECK(bad.err == "bisectctl: error: " + (dir / "bad.csv").string() + ":2: 'oops' is not a number\n");
  auto missing = run_cli({"detect", "--input", (dir / "none.json").string()});
  CHECK(missing.code == 1);
}

TEST_CASE("cli change point rendering", "[cli][offline]") {
  bisect::ChangePoint point;
  point.index = 12;
  point.id = "abc";
  point.direction = bisect::ShiftDirection::up;
  point.relative_change = 0.053;
  point.confidence = 0.98765;
  CHECK(cli::render_change_points({point}, true, 30) == "INDEX  COMMIT  DIRECTION  CHANGE  CONFIDENCE\n"
                                                        "   12  abc     up          +5.3%       0.988\n");
  auto json = cli::change_points_json({point}, false);
  CHECK(json["change_points"][0]["id"].is_null());
  CHECK(json["change_points"][0]["direction"] == "up");
}

TEST_CASE("bisectctl midpoint matches git rev-list --bisect", "[cli][offline]") {
  auto dir = make_repo(40);
  std::string good = git_out(dir, {"rev-parse", "main~25"});
  std::size_t total = std::stoul(git_out(dir, {"rev-list", "--count", "main", "^" + good}));
  auto weight_of = [&](const std::string& sha) {
    return std::stoul(git_out(dir, {"rev-list", "--count", sha, "^" + good}));
  };
  std::string git_pick = git_out(dir, {"rev-list", "--bisect", "main", "^" + good});
  std::size_t git_quality = std::min(weight_of(git_pick), total - weight_of(git_pick));

  auto result = run_cli({"midpoint", "--repo", dir.string(), "--good", good, "--bad", "main"});
  REQUIRE(result.code == 0);
  std::string ours = std::string(base::trim(result.out));
  CHECK(ours.size() == 40);
  // Ties may be broken differently from git; the split quality must be the same.
  CHECK(std::min(weight_of(ours), total - weight_of(ours)) == git_quality);

  auto json = run_cli({"midpoint", "--repo", dir.string(), "--good", good, "--bad", "main", "--json"});
  REQUIRE(json.code == 0);
  auto object = nlohmann::json::parse(json.out);
  CHECK(object["sha"] == ours);
  CHECK(object["total"] == total);
  CHECK(object["weight"] == weight_of(ours));
  CHECK(object["quality"] == git_quality);

  auto empty = run_cli({"midpoint", "--repo", dir.string(), "--good", "main", "--bad", "main"});
  CHECK(empty.code == 1);
  auto unknown = run_cli({"midpoint", "--repo", dir.string(), "--good", "nope", "--bad", "main"});
  CHECK(unknown.code == 1);
  CHECK(unknown.err.find("nope") != std::string::npos);
}
