// BCB posterior: the filter marginals against the closed-form NIG split likelihood and hand-computed values,
// scale invariance, prior handling (skips keep mass, irrelevant and identical builds get none).
#include "bisect/bcb.hpp"
#include "bisect/bcb_model.hpp"
#include "bisect/engine.hpp"
#include "bisect/engine_data.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bisectd::bisect;

namespace {

Problem chain_of(std::size_t n) {
  Problem p;
  for (std::size_t i = 0; i < n; ++i) {
    p.chain.push_back({"c" + std::to_string(i), 1.0, false, std::nullopt});
  }
  p.settings.noise = 0.03;
  return p;
}

void add(Problem& p, std::size_t commit, double value) {
  auto seq = static_cast<std::int64_t>(p.samples.size());
  p.samples.push_back({commit, value, "boot" + std::to_string(seq), seq, false});
}

BcbPriors single_component(double kappa0) {
  BcbPriors pr;
  pr.nu0 = 2;
  pr.s02 = 0.01;
  pr.kappa0 = kappa0;
  pr.p_none = 0.1;
  pr.components = {{0, 0, 0}};
  return pr;
}

} // namespace

TEST_CASE("bisect::bcb filter marginals match the closed-form NIG split likelihood", "[bisect][bcb]") {
  // Four probed commits with one or two runs each, values in log space directly.
  std::vector<BcbUnit> units = {{0, 2, 1.00, 0.02, 0}, {1, 1, 1.05, 0, 1}, {2, 1, 0.80, 0, 2}, {3, 2, 0.78, 0.01, 3}};
  std::vector<std::array<double, 3>> groups;
  for (const auto& u : units) {
    groups.push_back({u.n, u.n * u.mean, u.ss + u.n * u.mean * u.mean});
  }
  auto closed = nig_split_log_ml(groups, 2, 0.01);
  REQUIRE(closed.size() == 3);
  // Hand check of split 0 (first group before): n_b = 2, n_a = 4.
  double sb = 2.0, qb = 0.02 + 2.0;
  double sa = 1.05 + 0.80 + 2 * 0.78, qa = 1.05 * 1.05 + 0.8 * 0.8 + 0.01 + 2 * 0.78 * 0.78;
  double ss = (qb - sb * sb / 2) + (qa - sa * sa / 4);
  CHECK(closed[0] == Approx(-0.5 * std::log(2.0) - 0.5 * std::log(4.0) - 0.5 * (6 - 2 + 2) * std::log(0.02 + ss)));

  // The filter with a nearly flat shift prior gives the same posterior. Its first shift observation is (almost)
  // diffuse but still counted as a degree of freedom, so it matches the closed form with nu0 + 1 (same nu0*s0^2).
  closed = nig_split_log_ml(groups, 3, 0.02 / 3);
  std::vector<double> prior = {0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  auto pr = single_component(1e-8);
  pr.p_none = 0;
  auto post = compute_posterior(units, prior, pr);
  REQUIRE(post.seg_mass.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    double expected = std::exp(closed[k]) / (std::exp(closed[0]) + std::exp(closed[1]) + std::exp(closed[2]));
    CHECK(post.seg_mass[k] == Approx(expected).epsilon(1e-4));
  }
  // The drop between units 1 and 2 is the most likely split: c = 2.
  CHECK(post.seg_mass[1] > 0.7);
  CHECK(post.seg_mass[1] > post.seg_mass[0] + post.seg_mass[2]);
}

TEST_CASE("bisect::bcb posterior is invariant to the metric's scale", "[bisect][bcb]") {
  auto a = chain_of(9);
  auto b = chain_of(9);
  const double values[][2] = {{0, 100}, {8, 93}, {4, 99}, {6, 94}, {5, 99.5}, {0, 101}, {8, 92}};
  for (const auto& [c, v] : values) {
    add(a, static_cast<std::size_t>(c), v);
    add(b, static_cast<std::size_t>(c), v * 1234.5);
  }
  auto sa = next_step(a);
  auto sb = next_step(b);
  REQUIRE(sa.posterior.size() == sb.posterior.size());
  for (std::size_t i = 0; i < sa.posterior.size(); ++i) {
    CHECK(sa.posterior[i] == Approx(sb.posterior[i]).margin(1e-9));
  }
  CHECK(sa.p_no_change == Approx(sb.p_no_change));
  // The mass sits where the drop is: after 5 (good) and at or before 6 (bad).
  CHECK(sa.posterior[6] > 0.5);
  CHECK(sa.culprit == std::optional<std::size_t>{6});
}

TEST_CASE("bisect::bcb prior: skipped keep mass, irrelevant and identical builds get none", "[bisect][bcb]") {
  auto p = chain_of(6);
  p.chain[2].skipped = true;
  p.chain[3].prior = 0;
  p.chain[4].same_as = 5;
  std::string error;
  auto data = make_chain_data(p, error);
  REQUIRE(data);
  auto prior = commit_prior(p.chain, *data, 0.1);
  CHECK(prior[0] == 0);
  CHECK(prior[2] > 0);  // skipped: keeps its mass
  CHECK(prior[3] == 0); // irrelevant
  CHECK(prior[4] > 0);  // first commit of the identical pair can be the change
  CHECK(prior[5] == 0); // identical to its parent 4: cannot change anything
  double total = 0;
  for (double v : prior) {
    total += v;
  }
  CHECK(total == Approx(0.9));
}

TEST_CASE("bisect::bcb no-change hypothesis wins when nothing moves", "[bisect][bcb]") {
  auto p = chain_of(5);
  const double jitter[] = {0.01, -0.01, 0.005, -0.005, 0.0, 0.007, -0.007, 0.002};
  for (int r = 0; r < 40; ++r) {
    add(p, static_cast<std::size_t>((r * 3) % 5), 100 * (1 + 0.03 * jitter[r % 8] * 10));
  }
  p.settings.verification_pairs = 0;
  auto step = next_step(p);
  CHECK(step.p_no_change > 0.3); // up from the 0.1 prior
  for (double v : step.posterior) {
    CHECK(v < 0.3);
  }
}

TEST_CASE("bisect::bcb boot-to-boot variance adds to the history's run sigma", "[bisect][bcb]") {
  // History: run-to-run sigma 3 % within a boot, from 30 runs. The data: one run per boot at both endpoints (no
  // change between them), spread sqrt(2) x 3 %: run noise plus a boot offset as large. Only the boot-variance
  // components predict that spread; if the history's sigma were read as run and boot variance together, every
  // component would predict 3 % and the weights would stay near their prior (0.2 for boot variance).
  auto p = chain_of(20);
  p.settings.noise_runs = 30;
  const double e[] = {0.06, -0.05, 0.03, -0.035, 0.045, -0.02, 0.055, -0.045, 0.015, -0.06, 0.04, -0.03};
  std::int64_t seq = 0;
  for (int b = 0; b < 12; ++b) {
    for (std::size_t c : {std::size_t{0}, std::size_t{19}}) {
      double v = 1000 * std::exp(e[(b + (c == 0 ? 0 : 5)) % 12]);
      p.samples.push_back({c, v, "boot" + std::to_string(seq), seq, false});
      ++seq;
    }
  }
  std::string error;
  auto data = make_chain_data(p, error);
  REQUIRE(data);
  auto ctx = make_bcb_context(p, *data);
  double boot_weight = 0;
  for (std::size_t g = 0; g < ctx.post.comp_weight.size(); ++g) {
    boot_weight += ctx.priors.components[g].lambda > 0 ? ctx.post.comp_weight[g] : 0.0;
  }
  CHECK(boot_weight > 0.5);
}

TEST_CASE("bisect::bcb robust units weigh a far run by how likely it is a regular one", "[bisect][bcb]") {
  // Endpoints with 9 runs each (levels 1000 and 935, +-3 % spread), one endpoint run 10 sigmas out (heavy tail),
  // and one run each at commits 3 (near the good level) and 5 (12 sigmas below the bad level).
  auto p = chain_of(10);
  const double spread[9] = {0, 0.02, -0.02, 0.035, -0.035, 0.01, -0.01, 0.028, -0.028};
  for (double e : spread) {
    add(p, 0, 1000 * std::exp(e));
    add(p, 9, 935 * std::exp(e));
  }
  add(p, 0, 1000 * std::exp(0.3));
  add(p, 3, 1000 * std::exp(0.01));
  add(p, 5, 935 * std::exp(-0.36));
  std::string error;
  auto data = make_chain_data(p, error);
  REQUIRE(data);
  REQUIRE(looks_heavy_tailed(*data));
  auto weight_at = [](const std::vector<BcbUnit>& units, std::size_t pos) {
    double n = 0;
    for (const auto& u : units) {
      n += u.pos == pos ? u.n : 0.0;
    }
    return n;
  };
  auto plain = make_units(*data, false);
  auto robust = make_units(*data, true);
  CHECK(weight_at(plain, 5) == 1.0);
  CHECK(weight_at(robust, 5) < 0.01);
  CHECK(weight_at(robust, 3) > 0.95);
  CHECK(weight_at(robust, 0) < 9.1); // the far endpoint run counts for (almost) nothing of its build's 10
  CHECK(weight_at(robust, 0) > 8.5);
}
