// ledger/stats: the few statistics the ledger's criteria use, over per-seed values.
//
//   Spread:        median, min, max (and n) of per-seed values; NaNs are counted, not summarised
//   slope_loglog:  least-squares slope of log y on log x (the exponent of y ∝ x^k)
//   roughness:     mean |Δ² loss| of a curve, relative to its mean level: how much a loss curve
//                  oscillates beyond its trend (0 for a straight line)
//   steps_to:      the first step at which a curve reaches a target (-1 if never)
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace scalelab::ledger {

struct Spread {
  double median = 0, min = 0, max = 0;
  int64_t n = 0;        // finite values summarised
  int64_t non_finite = 0;
};
Spread spread_of(const std::vector<double>& values);
double median_of(std::vector<double> values);  // NaN when empty

// Requires >= 2 points with x > 0, y > 0; throws Error otherwise.
double slope_loglog(const std::vector<double>& x, const std::vector<double>& y);
// Ordinary least squares y = a + b x: returns {a, b}.
std::pair<double, double> linear_fit(const std::vector<double>& x, const std::vector<double>& y);

// Curve points (step, value), in step order.
using Curve = std::vector<std::pair<double, double>>;
double roughness(const Curve& curve);
// First step whose value is <= target (after smoothing over `window` points); -1 if never.
double steps_to(const Curve& curve, double target, int64_t window = 3);
// Mean of the values over the last `fraction` of the curve's points (at least one point).
double tail_mean(const Curve& curve, double fraction = 0.2);

}  // namespace scalelab::ledger
