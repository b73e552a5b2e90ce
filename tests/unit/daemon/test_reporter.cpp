// What the mail reporter takes from the daemon's side: which commits a report compares (the real parent, the
// one measured in its place), the compiler and kconfig names, and the shift read back from the samples.
#include "base/sandbox.hpp"
#include "daemon/bisection/driver.hpp"
#include "daemon/reporting/reporter.hpp"
#include "fakes/memory_store.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace bisectd;
using daemon::reporting::Conclusion;

namespace {

// "gcc-12": a compiler family and a major version.
bool is_gcc_label(const std::string& label) {
  return label.size() > 4 && label.starts_with("gcc-") && label.find_first_not_of("0123456789", 4) == std::string::npos;
}

Conclusion conclusion_of(const std::vector<bisect::Candidate>& chain, std::size_t culprit) {
  Conclusion c;
  for (const auto& candidate : chain) {
    c.chain.push_back(candidate.id);
  }
  c.culprit = culprit;
  c.parent = daemon::bisection::reference_parent(chain, culprit);
  c.culprit_sha = c.chain[culprit];
  return c;
}

} // namespace

TEST_CASE("reporting::compared_commits: the real parent, measured where its binary was built", "[daemon][report]") {
  // initial benchmark (0), docs (1, 2: no build input, prior 0), culprit (3), later (4).
  std::vector<bisect::Candidate> chain{{"init", 1.0, false, {}},
                                       {"docs5", 0.0, false, {}},
                                       {"docs6", 0.0, false, {}},
                                       {"slow", 1.0, false, {}},
                                       {"later", 1.0, false, {}}};
  auto c = conclusion_of(chain, 3);
  auto compared = daemon::reporting::compared_commits(c, "docs6");
  CHECK(compared.culprit == "slow");
  CHECK(compared.parent == "docs6"); // not "init", the first commit with the same binary
  CHECK(compared.measured == "init");
  CHECK(compared.measured_culprit == "slow");
  CHECK(compared.same_binary);
  CHECK(compared.parent_build == std::vector<std::string>{"init"}); // no build classes given: the measured commit
  c.parent_build = {"init", "docs6"};
  CHECK(daemon::reporting::compared_commits(c, "docs6").parent_build == c.parent_build);

  // An identical build (same_as) is measured as the commit it shares.
  chain[1].prior = chain[2].prior = 1.0;
  chain[2].same_as = 0;
  compared = daemon::reporting::compared_commits(conclusion_of(chain, 3), "docs6");
  CHECK(compared.parent == "docs6");
  CHECK(compared.measured == "init");
  CHECK(compared.same_binary);

  // A parent with its own build is its own measurement.
  chain[2].same_as.reset();
  compared = daemon::reporting::compared_commits(conclusion_of(chain, 3), "docs6");
  CHECK(compared.measured == "docs6");
  CHECK_FALSE(compared.same_binary);

  // A merge culprit found after its branch showed no change: compared with its own first parent.
  c = conclusion_of(chain, 3);
  c.culprit_sha = "merge";
  compared = daemon::reporting::compared_commits(c, "mainline");
  CHECK(compared.culprit == "merge");
  CHECK(compared.parent == "mainline");
  CHECK_FALSE(compared.same_binary);
}

TEST_CASE("reporting::compared_shift: the primary metric's samples of the compared commits", "[daemon][report]") {
  test::MemoryStore store;
  storage::RequestRow r;
  r.tree = "demo";
  r.job = "bench";
  r.machine_group = "local";
  r.runs = 3;
  for (const auto& [commit, values] : std::vector<std::pair<std::string, std::vector<double>>>{
         {"init", {100, 101, 99}}, {"slow", {80, 81, 79}}, {"docs6", {500, 500, 500}}, {"twin", {99, 100, 101}}}) {
    r.commit = commit;
    auto id = store.enqueue(r).value();
    std::vector<storage::SampleRow> samples;
    for (std::size_t run = 0; run < values.size(); ++run) {
      storage::SampleRow s;
      s.request_id = id;
      s.tree = "demo";
      s.job = "bench";
      s.commit = commit;
      s.machine = "m0";
      s.boot_id = "b-" + commit;
      s.run = static_cast<std::int64_t>(run);
      s.metrics = {{"ops", values[run]}};
      samples.push_back(s);
    }
    REQUIRE(store.finish_request(id, samples));
  }
  daemon::reporting::Compared compared;
  compared.culprit = compared.measured_culprit = "slow";
  compared.parent = "docs6";
  compared.measured = "init";
  compared.culprit_build = {"slow"};
  compared.parent_build = {"init"};
  compared.same_binary = true;
  auto shift = daemon::reporting::compared_shift(store, "bench", "ops", compared).value();
  REQUIRE(shift.known);
  CHECK(shift.estimate == Approx(-0.2)); // against "init", whose binary docs6 shares
  CHECK(shift.parent_runs == 3);
  CHECK_FALSE(daemon::reporting::compared_shift(store, "bench", "nosuch", compared).value().known);
  // Every commit of the parent's build counts: runs taken on one found to share it only after they ran (the
  // verification pairs on the parent itself) are the parent's too; before, a parent side whose runs were all on
  // such a commit was empty in the report.
  compared.parent_build = {"init", "twin"};
  shift = daemon::reporting::compared_shift(store, "bench", "ops", compared).value();
  CHECK(shift.parent_runs == 6);
  CHECK(shift.estimate == Approx(-0.2));
  compared.parent_build = {"twin"};
  CHECK(daemon::reporting::compared_shift(store, "bench", "ops", compared).value().parent_runs == 3);
}

TEST_CASE("reporting: compiler and kconfig named as LKP's axes", "[daemon][report]") {
  kbuild::Recipe recipe;
  recipe.kind = kbuild::RecipeKind::kernel;
  recipe.config = "tinyconfig";
  recipe.fragment = "/srv/configs/bench.config";
  CHECK(daemon::reporting::kconfig_label(recipe) == "x86_64-tinyconfig+bench");
  recipe.fragment.clear();
  recipe.config = "/srv/configs/x86_64-rhel-9.4";
  CHECK(daemon::reporting::kconfig_label(recipe) == "x86_64-x86_64-rhel-9.4");
  // The compiler is asked inside the sandbox only (tests/unit/daemon/test_report_additions.cpp).
  if (auto why = base::sandbox_unusable("bwrap"); !why.empty()) {
    WARN("bwrap is not usable here, the compiler probe is not exercised: " << why);
    return;
  }
  base::set_sandbox_policy({.enabled = true, .bwrap = "bwrap", .hidden = {}});
  // gcc is what the kernel recipe runs: its major version, as "gcc-12".
  CHECK(is_gcc_label(daemon::reporting::compiler_label(recipe)));
  recipe.env["CC"] = "ccache gcc";
  CHECK(is_gcc_label(daemon::reporting::compiler_label(recipe)));
  recipe.env["CC"] = "/nonexistent/cc";
  CHECK(daemon::reporting::compiler_label(recipe).empty());
  base::set_sandbox_policy({});
}
