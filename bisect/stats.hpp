#pragma once
// Pure statistics helpers shared by the detector and the bisection engines: descriptive and robust summaries,
// distribution functions, and two-sample tests (Welch/Student t, Mann-Whitney U). No I/O, no state.

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace bisectd::bisect {

// Scale from the median absolute deviation to the standard deviation of a normal distribution.
inline constexpr double k_mad_to_sigma = 1.4826;
inline constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

// Arithmetic mean; NaN for an empty input.
double mean(std::span<const double> values);
// Sample variance (divides by n-1); 0 when fewer than two values.
double variance(std::span<const double> values);
// Square root of `variance`.
double stddev(std::span<const double> values);
// Median (mean of the two middle values for even n); NaN for an empty input.
double median(std::span<const double> values);
// Quantile q in [0,1] with linear interpolation between order statistics (R type 7); NaN for empty input.
double quantile(std::span<const double> values, double q);
// y with each point clipped to +-3.5 sigma around the median of the 7 points centred on it: an outlier neither
// splits a stretch nor picks a model, while the running median follows a step or a ramp.
std::vector<double> clip_to_running_median(std::span<const double> y, double sigma);
// The natural logarithm of each value (bisectd compares runs as log values: a shift is a ratio).
std::vector<double> log_values(std::span<const double> values);
// Median absolute deviation from the median, unscaled; 0 for an empty input.
double mad(std::span<const double> values);
// 1.4826 * MAD: a standard deviation estimate that ignores up to half the values being outliers.
double robust_sigma(std::span<const double> values);
// 1.4826 * MAD(successive differences) / sqrt(2): noise sigma of a series that ignores its level steps.
// 0 for fewer than two values.
double diff_sigma(std::span<const double> values);
// Hodges-Lehmann shift: median of all pairwise differences b_j - a_i (robust "how much higher is b").
double hodges_lehmann_shift(std::span<const double> a, std::span<const double> b);

// Standard normal cumulative distribution function.
double normal_cdf(double x);
// Inverse of `normal_cdf` for p in (0,1) (Acklam's approximation, relative error < 1.2e-9).
double normal_quantile(double p);
// Regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0,1].
double regularized_beta(double a, double b, double x);
// Cumulative distribution function of Student's t with `df` > 0 degrees of freedom.
double student_t_cdf(double t, double df);

struct TTestResult {
  double t = 0;       // positive when b has the higher mean
  double df = 0;      // degrees of freedom used
  double p_value = 1; // two-sided
};
// Welch's unequal-variance t-test of mean(b) vs mean(a). Needs >= 2 values per side, else p = 1.
TTestResult welch_t_test(std::span<const double> a, std::span<const double> b);
// Student's pooled-variance t-test of mean(b) vs mean(a). Needs >= 2 values per side, else p = 1.
TTestResult student_t_test(std::span<const double> a, std::span<const double> b);

enum class PValueMethod { exact, normal };
struct RankTestResult {
  double u = 0;       // pairs (a_i, b_j) with b_j > a_i, ties count 1/2: u > n_a*n_b/2 means b is higher
  double z = 0;       // standardized u (tie-corrected, no continuity correction); sign as u - n_a*n_b/2
  double p_value = 1; // two-sided
  PValueMethod method = PValueMethod::normal;
};
// Mann-Whitney U (Wilcoxon rank-sum) test of b vs a. Exact p when there are no ties and n_a + n_b <= 50,
// otherwise the normal approximation with tie correction and continuity correction. Empty side: p = 1.
RankTestResult mann_whitney_u(std::span<const double> a, std::span<const double> b);
// Exact two-sided p-value of U = u for sample sizes n_a, n_b without ties (n_a + n_b <= 60).
double mann_whitney_exact_p(double u, std::size_t n_a, std::size_t n_b);

} // namespace bisectd::bisect
