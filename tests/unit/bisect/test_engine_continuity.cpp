// The posterior is continuous in the data: runs are always weighted by a learned contaminated-normal model, so no
// single sample switches the model and re-scores every past run at once. Constructed sequences: one 10-sigma
// sample anywhere moves P(culprit) by a bounded amount, and wild samples piling up at the boundary lower it step by
// step, never in one jump.
#include "bisect/bcb.hpp"
#include "bisect/bcb_model.hpp"
#include "bisect/engine.hpp"
#include "bisect/engine_data.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <initializer_list>

using namespace bisectd::bisect;

namespace {

constexpr std::size_t k_culprit = 12;
constexpr double k_sigma = 0.03, k_shift = -0.065; // a 2.17-sigma drop

// A 20-commit chain after a search: the alert's 9 runs per endpoint on 3 boots, single runs at 5, 10 and 15, and
// three runs each at the culprit (12) and its parent (11). Noise in sigma units from a fixed list.
struct Bisection {
  Problem p;
  std::int64_t seq = 0;

  Bisection() {
    for (std::size_t i = 0; i < 20; ++i) {
      p.chain.push_back({"c" + std::to_string(i), 1.0, false, std::nullopt});
    }
    p.settings.noise = k_sigma;
    p.settings.noise_runs = 30;
    p.settings.verification_pairs = 0;
    const double e[] = {0.3, -0.9, 1.2, -0.2, 0.5,  -1.4, 0.8,  0.1, -0.6, 1.0, -0.3,
                        0.7, -1.1, 0.2, 0.9,  -0.5, 0.4,  -0.8, 1.3, -0.1, 0.6, -0.7};
    std::size_t k = 0;
    for (int visit = 0; visit < 3; ++visit) {
      for (std::size_t c : {std::size_t{0}, std::size_t{19}}) {
        for (int r = 0; r < 3; ++r) {
          add(c, e[k++ % 22], "alert" + std::to_string(visit) + "-" + std::to_string(c));
        }
      }
    }
    for (std::size_t c : {10u, 5u, 15u, 12u, 11u, 12u, 11u, 12u, 11u}) {
      add(c, e[k++ % 22], "");
    }
  }

  // One run at commit c, `z` sigmas from its true level, on a boot of its own unless named.
  void add(std::size_t c, double z, const std::string& boot) {
    double level = c >= k_culprit ? std::log1p(k_shift) : 0.0;
    p.samples.push_back(
      {c, 1000 * std::exp(level + k_sigma * z), boot.empty() ? "b" + std::to_string(seq) : boot, seq, false});
    ++seq;
  }

  double p_culprit() const { return next_step(p).posterior[k_culprit]; }
};

} // namespace

TEST_CASE("bisect::bcb one 10-sigma sample moves P(culprit) by at most 0.05", "[bisect][bcb][continuity]") {
  Bisection base;
  double before = base.p_culprit();
  REQUIRE(before > 0.999);
  for (std::size_t c : {0u, 5u, 11u, 12u, 13u, 19u}) {
    for (double z : {10.0, -10.0}) {
      Bisection b = base;
      b.add(c, z, "");
      auto step = next_step(b.p);
      INFO("10-sigma run " << z << " at commit " << c << ": P " << before << " -> " << step.posterior[k_culprit]);
      CHECK(std::abs(step.posterior[k_culprit] - before) <= 0.05);
      CHECK(step.culprit == std::optional<std::size_t>{k_culprit});
    }
  }
}

TEST_CASE("bisect::bcb wild samples at the boundary lower P(culprit) step by step", "[bisect][bcb][continuity]") {
  // Up to eight 10-sigma runs (a fifth of all runs by then) alternate between parent and culprit and between
  // directions. Each one lowers P by at most 0.3 (the share of outliers the model learns grows, so moderately far
  // runs count less), the culprit stays the most likely commit, and P never rises on a wild run.
  Bisection b;
  double last = b.p_culprit();
  for (int i = 0; i < 8; ++i) {
    std::size_t c = i % 2 == 0 ? k_culprit - 1 : k_culprit;
    b.add(c, (i % 4 < 2 ? 10.0 : -10.0) * (i % 2 == 0 ? -1 : 1), "");
    auto step = next_step(b.p);
    double now = step.posterior[k_culprit];
    INFO("wild run " << i + 1 << ": P " << last << " -> " << now);
    CHECK(now <= last + 1e-9);
    CHECK(last - now <= 0.3);
    CHECK(step.culprit == std::optional<std::size_t>{k_culprit});
    last = now;
  }
  CHECK(last > 0.1);
}

TEST_CASE("bisect::bcb the run model's scale and outlier share move by a bounded amount per sample",
          "[bisect][bcb][continuity]") {
  // The quantities every run's weight depends on: one wild sample moves sigma by under 10 % and raises the outlier
  // share by about one run's worth of the prior plus the runs (1 / (50 + runs)), not to a fixed robust setting.
  Bisection base;
  std::string error;
  auto before_data = make_chain_data(base.p, error);
  REQUIRE(before_data);
  auto before = learn_run_model(*before_data, k_sigma, 30);
  Bisection b = base;
  b.add(k_culprit, 10, "");
  auto after_data = make_chain_data(b.p, error);
  REQUIRE(after_data);
  auto after = learn_run_model(*after_data, k_sigma, 30);
  CHECK(before.sigma > 0.8 * k_sigma);
  CHECK(std::abs(after.sigma - before.sigma) < 0.1 * before.sigma);
  CHECK(before.eps < 0.01);
  double runs = static_cast<double>(b.p.samples.size());
  CHECK(after.eps - before.eps > 0.5 / (50 + runs));
  CHECK(after.eps - before.eps < 1.5 / (50 + runs));
  // The wild run itself weighs (almost) nothing; the regular runs of its build keep nearly all their weight.
  auto units = make_units(*after_data, after);
  double at_culprit = 0;
  for (const auto& u : units) {
    at_culprit += u.pos == k_culprit ? u.n : 0.0;
  }
  CHECK(at_culprit > 2.7);
  CHECK(at_culprit < 3.05);
}
