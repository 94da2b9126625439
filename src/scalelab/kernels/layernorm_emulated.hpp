// kernels/layernorm_emulated: LayerNorm (or RMSNorm) forward in an emulated format, with the sums
// accumulated in f32 or in the format itself, every op counted (claims E6, B4).
//
// Per row x[0..n) (stored in the format, counted as input_cast), all results rounded:
//   sum  = sum_j x_j                 (accumulate format; layernorm_sum)
//   mean = round(sum / n)            (layernorm_sum; 0 for RMSNorm)
//   c_j  = round(x_j - mean)         (layernorm_var)
//   ss   = sum_j c_j·c_j             (products and partial sums in the accumulate format;
//                                     layernorm_var: f16 overflows once ss > 65504)
//   var  = round(ss / n)             (layernorm_var)
//   rstd = round(1 / round(sqrt(round(var + eps))))           (layernorm_normalize)
//   y_j  = round(round(round(c_j · rstd) · gamma_j) + beta_j) (layernorm_normalize)
#pragma once
#include <cstdint>

#include "scalelab/kernels/layernorm.hpp"
#include "scalelab/kernels/precision.hpp"

namespace scalelab {

struct EmulatedNormOptions {
  DType dtype = DType::f16;
  DType accumulate = DType::f32;  // f32 or dtype: where sum and ss are accumulated
  bool rms = false;               // RMSNorm: no mean, no beta
};

// x, y [rows, cols]; gamma, beta [cols] (beta may be null). shape.eps as in layernorm.hpp.
void layernorm_emulated_forward(const NormShape& shape, const EmulatedNormOptions& opt,
                                const float* x, const float* gamma, const float* beta, float* y,
                                OverflowCounters& counters);

}  // namespace scalelab
