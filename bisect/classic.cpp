#include "bisect/classic.hpp"

#include "bisect/bcb_math.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace bisectd::bisect {

namespace {

std::vector<double> values(const std::vector<LogSample>& samples) {
  std::vector<double> out;
  out.reserve(samples.size());
  for (const auto& s : samples) {
    out.push_back(s.y);
  }
  return out;
}

struct Replay {
  std::size_t lo = 0, hi = 0;
  double p_right = 1.0; // heuristic product of per-step correctness
};

// Adds a pick unless the commit already runs; returns false when it had to wait for in-flight runs.
void request(Step& step, const Settings& s, std::size_t commit, int runs) {
  if (contains(s.in_flight, commit)) {
    step.trace.push_back("waiting: commit " + std::to_string(commit) + " has runs in flight");
    return;
  }
  if (static_cast<int>(step.picks.size()) < std::max(1, s.idle_machines)) {
    step.picks.push_back({commit, runs, false});
  }
}

// Judges commit samples `ys`: +1 like bad, -1 like good, 0 undecided (more runs wanted).
int judge(const std::vector<double>& good, const std::vector<double>& bad, const std::vector<double>& ys,
          ClassicRule rule, double threshold, bool final_try) {
  if (rule == ClassicRule::lkp) {
    bool vs_good = lkp_changed(good, ys, threshold);
    bool vs_bad = lkp_changed(bad, ys, threshold);
    if (vs_good != vs_bad) {
      return vs_good ? 1 : -1;
    }
    if (!final_try) {
      return 0;
    }
    double m = median(ys);
    return std::abs(m - median(bad)) < std::abs(m - median(good)) ? 1 : -1;
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) {
      s += x;
    }
    return s / static_cast<double>(v.size());
  };
  double m = mean(ys);
  return std::abs(m - mean(bad)) < std::abs(m - mean(good)) ? 1 : -1;
}

void fill_posterior(Step& step, std::size_t size, std::size_t lo, std::size_t hi) {
  step.posterior.assign(size, 0.0);
  for (std::size_t i = lo + 1; i <= hi; ++i) {
    step.posterior[i] = 1.0 / static_cast<double>(hi - lo);
  }
}

} // namespace

bool lkp_changed(std::vector<double> a, std::vector<double> b, double threshold) {
  if (a.empty() || b.empty()) {
    return false;
  }
  auto summarize = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    std::size_t margin = v.size() >> 5;
    return std::array<double, 3>{v[margin], v[v.size() / 2], v[v.size() - 1 - margin]};
  };
  auto [min_a, med_a, max_a] = summarize(a);
  auto [min_b, med_b, max_b] = summarize(b);
  bool separated = (min_b > med_a && med_b > max_a) || (min_a > med_b && med_a > max_b);
  return separated && std::abs(med_b - med_a) > std::log1p(threshold);
}

std::optional<std::size_t> classic_midpoint(const std::vector<Candidate>& chain, std::size_t lo, std::size_t hi) {
  std::size_t mid = lo + (hi - lo) / 2;
  for (std::size_t off = 0; off < hi - lo; ++off) {
    for (std::size_t c : {mid - std::min(off, mid), mid + off}) {
      if (c > lo && c < hi && !chain[c].skipped) {
        return c;
      }
    }
  }
  return std::nullopt;
}

Step classic_step(const Problem& problem, const ChainData& data, ClassicRule rule) {
  const auto& s = problem.settings;
  const int k = std::max(1, s.runs_per_visit);
  const std::size_t last = data.size - 1;
  Step step;
  step.runs_used = data.runs;
  step.builds_used = data.builds;
  fill_posterior(step, data.size, 0, last);
  for (std::size_t e : {std::size_t{0}, last}) {
    int have = static_cast<int>(data.at(e).size());
    if (have < k) {
      request(step, s, e, k - have);
    }
  }
  if (data.at(0).size() < static_cast<std::size_t>(k) || data.at(last).size() < static_cast<std::size_t>(k)) {
    step.trace.push_back("classic: measuring the endpoints with " + std::to_string(k) + " runs each");
    return step;
  }
  auto good = values(data.at(0));
  auto bad = values(data.at(last));
  if (rule == ClassicRule::lkp && !lkp_changed(good, bad, s.threshold)) {
    step.verdict = Verdict::no_change;
    step.p_no_change = 1.0;
    step.posterior.assign(data.size, 0.0);
    (void)shift_interval(data.at(0), data.at(last), step); // how far apart the endpoints are, for the verdict's text
    step.trace.push_back("classic: good and bad endpoints do not differ by LKP's non-overlap rule + threshold");
    return step;
  }
  // Heuristic confidence: each step right with probability Phi(d*sqrt(n)/2), d from the endpoint samples.
  auto mg = moments(data.at(0));
  auto mb = moments(data.at(last));
  double sd = std::sqrt(std::max((mg.var * (mg.n - 1) + mb.var * (mb.n - 1)) / std::max(1.0, mg.n + mb.n - 2), 1e-12));
  double d_hat = std::abs(mb.mean - mg.mean) / sd;
  Replay r{0, last, 1.0};
  while (r.hi - r.lo > 1) {
    auto m = classic_midpoint(problem.chain, r.lo, r.hi);
    if (!m) {
      fill_posterior(step, data.size, r.lo, r.hi);
      step.verdict = Verdict::ambiguous;
      for (std::size_t i = r.lo + 1; i <= r.hi; ++i) {
        step.credible_set.push_back(i);
      }
      step.culprit = r.hi;
      step.trace.push_back("classic: only skipped commits left between " + std::to_string(r.lo) + " and " +
                           std::to_string(r.hi) + "; the first bad commit could be any of them");
      return step;
    }
    auto ys = values(data.at(*m));
    int verdict = 0;
    if (ys.size() >= static_cast<std::size_t>(k)) {
      verdict = judge(good, bad, ys, rule, s.threshold, ys.size() >= static_cast<std::size_t>(2 * k));
    }
    if (verdict == 0) {
      int want = ys.size() < static_cast<std::size_t>(k) ? k - static_cast<int>(ys.size()) : k;
      fill_posterior(step, data.size, r.lo, r.hi);
      request(step, s, *m, want);
      step.trace.push_back("classic: testing commit " + std::to_string(*m) + " of range (" + std::to_string(r.lo) +
                           ", " + std::to_string(r.hi) + "]" + (ys.empty() ? "" : ", undecided so far"));
      return step;
    }
    r.p_right *= math::normal_cdf(d_hat * std::sqrt(static_cast<double>(ys.size())) / 2);
    step.trace.push_back("classic: commit " + std::to_string(*m) + (verdict > 0 ? " like bad" : " like good"));
    (verdict > 0 ? r.hi : r.lo) = *m;
  }
  fill_posterior(step, data.size, r.lo, r.hi);
  step.verdict = Verdict::found;
  step.culprit = r.hi;
  step.credible_set = {r.hi};
  step.p_culprit = r.p_right;
  shift_interval(data.at(r.lo), data.at(r.hi), step);
  step.trace.push_back("classic: first bad commit " + std::to_string(r.hi) + "; p_culprit " +
                       std::to_string(r.p_right) +
                       " is a heuristic (product of Phi(d*sqrt(n)/2) per step, gaussian "
                       "noise and endpoint means assumed), not a posterior");
  return step;
}

} // namespace bisectd::bisect
