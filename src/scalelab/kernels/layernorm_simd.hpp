// kernels/layernorm_simd: float LayerNorm rows, forward and backward, vectorised for the CPU's
// best SIMD target (Highway; kernels/simd_dispatch.hpp). The math and its plain twin are
// kernels/layernorm.hpp's; layernorm_forward/backward<float> call these on each thread's rows.
#pragma once
#include <cstdint>

namespace scalelab {

// Rows [0, rows) of x [rows, cols], one dispatch for them all: y = gamma · (x - mean)·rstd + beta
// per row; writes each row's mean and rstd.
void layernorm_rows_simd(const float* x, const float* gamma, const float* beta, float* y,
                         float* mean, float* rstd, int64_t rows, int64_t cols, double eps);
// Rows [0, rows): dx overwritten; dgamma += dy · xhat and dbeta += dy into the given accumulators,
// the rows added in order.
void layernorm_backward_rows_simd(const float* dy, const float* x, const float* gamma,
                                  const float* rstd, float* dx, float* dgamma, float* dbeta,
                                  int64_t rows, int64_t cols);

}  // namespace scalelab
