// probes/moments: running mean and variance (Welford 1962), mergeable (Chan, Golub & LeVeque 1979),
// with the extremes. Every probe that reports a mean or a variance accumulates one of these, so
// partial results (per thread, per batch, per head) combine exactly in any grouping.
//
//   add(x):     n' = n + 1;  d = x - mean;  mean' = mean + d / n';  M2' = M2 + d (x - mean')
//   merge(b):   n = na + nb; d = mean_b - mean_a; mean = mean_a + d nb / n;
//               M2 = M2_a + M2_b + d² na nb / n
//   variance() = M2 / n  (population: the probes describe the values they saw, not an estimator)
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

namespace scalelab::probes {

struct RunningMoments {
  int64_t count = 0;
  double mean = 0.0;
  double m2 = 0.0;  // sum of squared deviations from the mean
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  void add(double x) {
    ++count;
    const double d = x - mean;
    mean += d / static_cast<double>(count);
    m2 += d * (x - mean);
    if (x < min) min = x;
    if (x > max) max = x;
  }
  // Adds n values (a two-pass block, then one merge: faster and as accurate as element-wise adds).
  template <class T>
  void add_values(const T* x, int64_t n);
  void merge(const RunningMoments& o);

  double variance() const { return count > 0 ? m2 / static_cast<double>(count) : nan(); }
  double sample_variance() const { return count > 1 ? m2 / static_cast<double>(count - 1) : nan(); }
  double stddev() const { return std::sqrt(variance()); }
  double max_abs() const { return count > 0 ? std::fmax(std::fabs(min), std::fabs(max)) : nan(); }
  double mean_or_nan() const { return count > 0 ? mean : nan(); }
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
};

// Moments of x[0..n) in one block (two passes in double).
template <class T>
RunningMoments block_moments(const T* x, int64_t n);

template <class T>
void RunningMoments::add_values(const T* x, int64_t n) {
  if (n > 0) merge(block_moments(x, n));
}

// The values together with the share that falls inside [lo, hi] (e.g. logits within [-3, 3]).
struct RangeMoments {
  double lo = -3.0, hi = 3.0;
  RunningMoments moments;
  int64_t within = 0;

  void add(double x) {
    moments.add(x);
    if (x >= lo && x <= hi) ++within;
  }
  void merge(const RangeMoments& o);  // the ranges must be equal
  double within_share() const {
    return moments.count > 0 ? static_cast<double>(within) / static_cast<double>(moments.count)
                             : RunningMoments::nan();
  }
};

}  // namespace scalelab::probes
