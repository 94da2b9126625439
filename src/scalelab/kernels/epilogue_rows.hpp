// kernels/epilogue_rows: the ReLU and the ReLU-gradient mask a float GEMM applies to its band of C
// right after writing it (kernels/gemm.hpp, GemmEpilogue), vectorised for the CPU's best SIMD
// target (Highway; kernels/simd_dispatch.hpp). For m rows of n, row stride ldc:
//   relu_rows:  C[i, j] = C[i, j] < 0 ? 0 : C[i, j]      (NaN and -0 kept, as activation_forward)
//   mask_rows:  C[i, j] = a[i, j] > 0 ? C[i, j] : 0      (a dense, row stride n; NaN in a gives 0)
// With bf16_out (not null), the same pass also writes the result's bf16 bits (round to nearest
// even, as f32_to_bf16_row; dense, row stride n): the epilogue's bf16 copy of C (GemmEpilogue::
// bf16_out), read from the values in registers instead of in a second pass over C.
// Not oneDNN's eltwise_relu post-op, which turns NaN into 0 (tests/kernels/gemm_epilogue_test.cpp)
// and would hide a non-finite weight from the trainer's guard. The twin is gemm.cpp's
// apply_epilogue (gemm_bias_act_ref); the comparisons are exact, so both give the same bits.
//
// The same two passes on C held only as bf16 bits (a GEMM with a bf16 C: gemm_bf16_out in
// kernels/gemm.hpp), the comparisons made on the bits, with the float passes' results:
//   relu_bf16_rows:  C[i, j] = 0 where C[i, j] is negative: sign set, magnitude 1 .. 0x7F80
//                    (-inf included; -0 and NaN kept)
//   mask_bf16_rows:  C[i, j] = a[i, j] > 0 ? C[i, j] : 0, a > 0 where a's bits are 1 .. 0x7F80
//                    (+inf included; NaN, +-0 and negatives give 0)
// The twins (relu_bf16_rows_plain, mask_bf16_rows_plain) widen to float and compare there.
#pragma once
#include <cstdint>

namespace scalelab {

void relu_rows(float* c, int64_t m, int64_t n, int64_t ldc, uint16_t* bf16_out = nullptr);
void mask_rows(float* c, const float* a, int64_t m, int64_t n, int64_t ldc,
               uint16_t* bf16_out = nullptr);

void relu_bf16_rows(uint16_t* c, int64_t m, int64_t n, int64_t ldc);
void mask_bf16_rows(uint16_t* c, const uint16_t* a, int64_t m, int64_t n, int64_t ldc);
void relu_bf16_rows_plain(uint16_t* c, int64_t m, int64_t n, int64_t ldc);
void mask_bf16_rows_plain(uint16_t* c, const uint16_t* a, int64_t m, int64_t n, int64_t ldc);

}  // namespace scalelab
