// kernels/bf16_convert: fast float -> bfloat16 rounding (round-to-nearest-even) for the bf16
// matmul operands (kernels/gemm.hpp, MatmulPrecision::bf16).
//
// The reference twin is f32_to_bf16_bits (kernels/precision.hpp), which rounds through double;
// this one is integer bit arithmetic that the compiler vectorises:
//   bits' = bits + 0x7FFF + ((bits >> 16) & 1);  bf16 = bits' >> 16
// Adding 0x7FFF plus the lowest kept bit rounds half to even; a carry out of the mantissa bumps
// the exponent, which is how the largest finite floats round to infinity. NaN is caught first
// (the carry could turn a low-payload NaN into infinity) and becomes the quiet NaN 0x7FC0 with its
// sign, as in the twin. Subnormals need nothing special: bf16 has f32's exponent range.
#pragma once
#include <cstdint>

namespace scalelab {

// out[i] = bf16 bits of x[i], i < n. Serial; callers split rows across threads.
void f32_to_bf16_row(const float* x, int64_t n, uint16_t* out);
// out[i] = x[i] rounded to bf16 and widened back to float (exact), i < n; out may equal x.
void round_row_to_bf16(const float* x, int64_t n, float* out);

}  // namespace scalelab
