// kernels/cross_entropy_row: one row of label-smoothed cross-entropy (train/loss.hpp has the whole
// loss). For logits z[V], the target y and smoothing e, in double:
//
//   m        = max_j z_j,  argmax = the first j with z_j = m
//   e_j      = exp(z_j - m),  S = sum_j e_j
//   log_norm = m + log S                                  (= log sum_j exp z_j)
//   sum_z    = sum_j z_j
//   dz_j     = (e_j / S - q_j) · grad_scale,  q_j = (j = y ? 1 - e : 0) + e / V    (if dz given)
//
// The float kernel (Highway, every compiled target, chosen at run time) takes the exponentials and
// sums in vectors of doubles; its plain twin is the scalar loop. The two differ by the order of the
// double sums and the exponential's last bit (Highway's Exp is within 1 ulp), ~1e-16 relative; the
// argmax is the same (a row holding NaN is handed to the twin).
#pragma once
#include <cstdint>

namespace scalelab {

struct CrossEntropyRow {
  double log_norm = 0;  // log sum_j exp z_j
  double sum_z = 0;     // sum_j z_j
  int64_t argmax = 0;   // the first index of the largest logit
};

// dz may be null (no gradient). vocab >= 1; 0 <= target < vocab.
CrossEntropyRow cross_entropy_row(const float* z, int64_t vocab, int32_t target, double smoothing,
                                  double grad_scale, float* dz);
CrossEntropyRow cross_entropy_row(const double* z, int64_t vocab, int32_t target, double smoothing,
                                  double grad_scale, double* dz);

// The plain twin (the double overload above runs it).
template <class T>
CrossEntropyRow cross_entropy_row_plain(const T* z, int64_t vocab, int32_t target,
                                        double smoothing, double grad_scale, T* dz);

}  // namespace scalelab
