// probes/softmax_stats: what one attention row's softmax looks like, and the running totals.
//
// For a row of n visible keys with probabilities p (sum 1):
//   entropy            H = -sum_j p_j ln p_j                  (nats; 0 ln 0 = 0)
//   normalised entropy H / ln n  in [0, 1]                    (1: uniform; defined for n >= 2)
//   max probability    max_j p_j                              (saturated when > the threshold)
//   Jacobian norm      ||J||_F with J = d softmax / d s = diag(p) - p pᵀ, the FROBENIUS norm:
//                      ||J||_F² = sum_j p_j² - 2 sum_j p_j³ + (sum_j p_j²)²
//                      (0 for a one-hot row; sqrt(1/n - 1/n²) for a uniform row, e.g. 0.5 for
//                      two keys; the spectral norm would be the largest eigenvalue instead)
// The Jacobian is what the backward multiplies dp by (ds = J dp), so its norm says how much
// gradient passes through the softmax: near 0 when saturated (claim A4) and small when uniform
// over many keys (claim A3).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "scalelab/probes/histogram.hpp"
#include "scalelab/probes/moments.hpp"

namespace scalelab::probes {

struct SoftmaxRow {
  int64_t n = 0;                    // visible keys
  double entropy = 0.0;             // nats
  double normalized_entropy = 0.0;  // H / ln n; NaN when n < 2
  double max_p = 0.0;
  double jacobian_fro = 0.0;
};

// From probabilities p[0..n) (n >= 1); p need not be renormalised but should sum to 1.
SoftmaxRow softmax_row_from_probs(const double* p, int64_t n);
// From logits s[0..n) (the visible ones; n >= 1): p = softmax(s) in double, max subtracted.
// scratch is resized to n.
SoftmaxRow softmax_row_from_logits(const double* s, int64_t n, std::vector<double>& scratch);

struct SoftmaxThresholds {
  double saturated = 0.99;    // a row is saturated when max p > this (strictly)
  double near_uniform = 0.9;  // a row is near-uniform when normalised entropy >= this (n >= 2)
};

// Running totals over rows. A row with a single visible key (the first row of a causal mask) has
// p = (1) whatever the logits: it counts in `rows` and `single_key_rows` only, and every other
// figure (entropy, max p, saturation, Jacobian) is over the rows with n >= 2, so that a causal
// mask does not look like saturation.
struct SoftmaxAccumulator {
  SoftmaxThresholds thresholds;
  int64_t rows = 0;             // all rows added
  int64_t single_key_rows = 0;  // rows with n = 1 (left out of the figures below)
  int64_t saturated_rows = 0;
  int64_t near_uniform_rows = 0;
  RunningMoments normalized_entropy;
  RunningMoments entropy;  // nats
  RunningMoments max_p;
  RunningMoments jacobian_fro;
  std::optional<Histogram> entropy_histogram;  // of the normalised entropy, if the caller set bins

  void add(const SoftmaxRow& row);
  void merge(const SoftmaxAccumulator& other);  // thresholds must match
  double saturated_share() const;     // of the rows with n >= 2
  double near_uniform_share() const;  // of the rows with n >= 2
};

}  // namespace scalelab::probes
