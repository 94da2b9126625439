// kernels/layernorm_simd: one float LayerNorm row, forward and backward, vectorised for the CPU's
// best SIMD target (Highway; kernels/simd_dispatch.hpp). The math and its plain twin are
// kernels/layernorm.hpp's; layernorm_forward/backward<float> call these per row.
#pragma once
#include <cstdint>

namespace scalelab {

// y = gamma · (x - mean)·rstd + beta over cols; writes the row's mean and rstd.
void layernorm_row_simd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                        float* rstd, int64_t cols, double eps);
// dx for one row (overwritten); dgamma += dy · xhat and dbeta += dy into the given accumulators.
void layernorm_backward_row_simd(const float* dy, const float* x, const float* gamma, float rstd,
                                 float* dx, float* dgamma, float* dbeta, int64_t cols);

}  // namespace scalelab
