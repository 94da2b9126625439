// kernels/epilogue_rows: the ReLU and the ReLU-gradient mask a float GEMM applies to its band of C
// right after writing it (kernels/gemm.hpp, GemmEpilogue), vectorised for the CPU's best SIMD
// target (Highway; kernels/simd_dispatch.hpp). For m rows of n, row stride ldc:
//   relu_rows:  C[i, j] = C[i, j] < 0 ? 0 : C[i, j]      (NaN and -0 kept, as activation_forward)
//   mask_rows:  C[i, j] = a[i, j] > 0 ? C[i, j] : 0      (a dense, row stride n; NaN in a gives 0)
// Not oneDNN's eltwise_relu post-op, which turns NaN into 0 (tests/kernels/gemm_epilogue_test.cpp)
// and would hide a non-finite weight from the trainer's guard. The twin is gemm.cpp's
// apply_epilogue (gemm_bias_act_ref); the comparisons are exact, so both give the same bits.
#pragma once
#include <cstdint>

namespace scalelab {

void relu_rows(float* c, int64_t m, int64_t n, int64_t ldc);
void mask_rows(float* c, const float* a, int64_t m, int64_t n, int64_t ldc);

}  // namespace scalelab
