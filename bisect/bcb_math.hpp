#pragma once
// Small numeric helpers for BCB (own namespace: stats.hpp of the detector has similar names).

#include <vector>

namespace bisectd::bisect::math {

double normal_cdf(double x);

// Inverse of the standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9).
double normal_quantile(double p);

// Capacity in bits of a binary-input Gaussian channel with mean separation `d` (sigma 1, uniform input):
// the information one soft run can carry about "before or after the change" (research §9).
double biawgn_capacity(double d);

// Binary entropy in bits.
double binary_entropy(double p);

// Fano/genie lower bound on runs to find 1 of `n` equally likely commits with error `delta` at separation `d`.
double runs_lower_bound(double n, double d, double delta);

} // namespace bisectd::bisect::math
