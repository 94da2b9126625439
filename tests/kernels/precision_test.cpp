// Format emulation: known answers, exhaustive and random property tests against references written
// independently (the compiler's _Float16 and integer bit rounding), and the per-op counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "scalelab/core/error.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/precision.hpp"

namespace scalelab {
namespace {

float bits_to_float(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
uint32_t float_to_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// Reference 1: bf16 by integer round-to-nearest-even on the f32 bits.
uint16_t bf16_reference(float x) {
  uint32_t u = float_to_bits(x);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

// Reference 2: f16 by manual bit manipulation of the f32 encoding (normal, subnormal, overflow).
uint16_t f16_reference(float x) {
  const uint32_t u = float_to_bits(x);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const int32_t exp32 = static_cast<int32_t>((u >> 23) & 0xFF);
  uint32_t mant = u & 0x7FFFFF;
  if (exp32 == 0xFF) return sign | 0x7C00 | (mant ? 0x200 : 0);
  int32_t exp16 = exp32 - 127 + 15;
  if (exp16 >= 0x1F) return sign | 0x7C00;
  uint32_t shift = 13;  // 23 - 10 mantissa bits dropped
  if (exp16 <= 0) {     // subnormal in f16: shift the implicit bit in
    if (exp32 == 0) return sign;  // f32 subnormals are far below f16's range
    shift = static_cast<uint32_t>(14 - exp16);
    if (shift > 24) return sign;
    mant |= 0x800000;
    exp16 = 0;
  }
  const uint32_t half = 1u << (shift - 1), rest = mant & ((1u << shift) - 1);
  uint32_t m = mant >> shift;
  if (rest > half || (rest == half && (m & 1))) m += 1;
  // A carry out of the mantissa moves into the exponent (subnormal 0x3FF + 1 is the smallest
  // normal, 0x7BFF + 1 is inf), which is what the encoding wants.
  const uint32_t bits = (static_cast<uint32_t>(exp16) << 10) + m;
  return static_cast<uint16_t>(sign | std::min<uint32_t>(bits, 0x7C00));
}

TEST(Precision, KnownAnswers) {
  // 65504 + 16 = 65520 lies halfway between 65504 (odd mantissa) and 65536: ties to even -> 65536,
  // which f16 cannot hold: +inf.
  EXPECT_EQ(round_to(DType::f16, 65504.0 + 16.0), HUGE_VAL);
  EXPECT_EQ(round_to(DType::f16, 65504.0 + 15.0), 65504.0);
  // Gemma's embedding constant: sqrt(3072) = 55.4256... is 55.5 in bf16 (quantum 0.25 in [32, 64)).
  EXPECT_EQ(round_to(DType::bf16, std::sqrt(3072.0)), 55.5);
  EXPECT_EQ(round_to(DType::f16, std::sqrt(3072.0)), 55.4375);
  // e^12 = 162754.79 overflows f16; e^11 = 59874.14 rounds to 59872 (quantum 32).
  EXPECT_EQ(round_to(DType::f16, std::exp(12.0)), HUGE_VAL);
  EXPECT_EQ(round_to(DType::f16, std::exp(11.0)), 59872.0);
  EXPECT_EQ(round_to(DType::bf16, std::exp(12.0)), 162816.0);  // quantum 1024
  // Ties to even at 1: 1 + 2^-11 -> 1, 1 + 3·2^-11 -> 1 + 2^-9 in f16; 1 + 2^-8 -> 1 in bf16.
  EXPECT_EQ(round_to(DType::f16, 1 + 0x1p-11), 1.0);
  EXPECT_EQ(round_to(DType::f16, 1 + 3 * 0x1p-11), 1 + 0x1p-9);
  EXPECT_EQ(round_to(DType::bf16, 1 + 0x1p-8), 1.0);
  EXPECT_EQ(round_to(DType::f16, 0.1), 0.0999755859375);
  EXPECT_EQ(round_to(DType::bf16, 0.1), 0.10009765625);
  // Gradual underflow in f16: 2^-24 is the smallest subnormal, 2^-25 ties to 0, 3·2^-26 -> 2^-24.
  EXPECT_EQ(round_to(DType::f16, 0x1p-24), 0x1p-24);
  EXPECT_EQ(round_to(DType::f16, 0x1p-25), 0.0);
  EXPECT_EQ(round_to(DType::f16, 3 * 0x1p-26), 0x1p-24);
  // The largest f32 overflows bf16 (rounds up to 2^128); bf16's largest is (2 - 2^-7) 2^127.
  EXPECT_EQ(round_to(DType::bf16, std::numeric_limits<float>::max()), HUGE_VAL);
  EXPECT_EQ(round_to(DType::bf16, 0x1.fep127), 0x1.fep127);
  EXPECT_EQ(round_to(DType::f32, 1 + 0x1p-24), 1.0);
  EXPECT_EQ(round_to(DType::f32, 1e39), HUGE_VAL);
  EXPECT_TRUE(std::isnan(round_to(DType::f16, std::nan(""))));
  EXPECT_EQ(round_to(DType::f16, -70000.0), -HUGE_VAL);
  // Encodings.
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16_bits(0x1p-24f), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7C00);
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16_bits(55.4256f), 0x425E);  // 55.5
  EXPECT_EQ(bf16_bits_to_f32(0x425E), 55.5f);
  EXPECT_EQ(f16_bits_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_THROW(parse_dtype("fp8"), Error);
}

TEST(Precision, EveryF16EncodingRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float x = f16_bits_to_f32(bits);
    _Float16 h;
    std::memcpy(&h, &bits, 2);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(h)));
      continue;
    }
    ASSERT_EQ(x, static_cast<float>(h)) << std::hex << b;  // decoding agrees with the compiler
    ASSERT_EQ(f32_to_f16_bits(x), bits) << std::hex << b;
    ASSERT_EQ(round_to(DType::f16, x), x);  // representable values are fixed points
  }
}

// Random f32 values over the whole exponent range, and values near f16's and bf16's boundaries
// (halfway points included): round_to must agree with both independent references.
TEST(Precision, RandomValuesMatchCompilerAndBitReferences) {
  Rng rng(42);
  for (int n = 0; n < 400000; ++n) {
    float x;
    if (n % 4 == 0) {
      x = bits_to_float(static_cast<uint32_t>(rng.next_u64()));  // any f32, NaN included
    } else if (n % 4 == 1) {  // f16's range and just beyond
      x = static_cast<float>(std::ldexp(rng.uniform(-1, 1), static_cast<int>(rng.below(46)) - 28));
    } else if (n % 4 == 2) {  // exact halfway points between neighbouring f16 values
      const uint16_t h = static_cast<uint16_t>(rng.below(0x7BFF));
      x = static_cast<float>((double(f16_bits_to_f32(h)) + f16_bits_to_f32(h + 1)) / 2);
    } else {  // halfway points between neighbouring bf16 values
      const uint16_t h = static_cast<uint16_t>(rng.below(0x7F7F));
      x = static_cast<float>((double(bf16_bits_to_f32(h)) + bf16_bits_to_f32(h + 1)) / 2);
    }
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(round_to(DType::f16, x)));
      continue;
    }
    const _Float16 h = static_cast<_Float16>(x);
    ASSERT_EQ(round_to(DType::f16, x), static_cast<double>(h)) << x;
    ASSERT_EQ(f32_to_f16_bits(x), f16_reference(x)) << x;
    ASSERT_EQ(f32_to_bf16_bits(x), bf16_reference(x)) << x;
    ASSERT_EQ(round_to(DType::bf16, x), bf16_bits_to_f32(bf16_reference(x))) << x;
    ASSERT_EQ(round_to(DType::f32, x), x);
  }
}

TEST(Precision, CountersRecordOverflowUnderflowSubnormalNan) {
  OverflowCounters c;
  Emulated f16{DType::f16, &c};
  EXPECT_EQ(f16.add(65504.0f, 16.0f, PrecisionOp::residual_add), HUGE_VALF);
  EXPECT_EQ(f16.exp(12.0f, PrecisionOp::softmax_exp), HUGE_VALF);
  EXPECT_EQ(f16.exp(11.0f, PrecisionOp::softmax_exp), 59872.0f);
  EXPECT_EQ(f16.mul(0x1p-13f, 0x1p-13f, PrecisionOp::gemm), 0.0f);       // 2^-26: underflow
  EXPECT_EQ(f16.mul(0x1p-10f, 0x1p-10f, PrecisionOp::gemm), 0x1p-20f);   // subnormal
  EXPECT_TRUE(std::isnan(f16.sub(HUGE_VALF, HUGE_VALF, PrecisionOp::softmax_max_sub)));
  EXPECT_EQ(f16.div(HUGE_VALF, 2.0f, PrecisionOp::softmax_div), HUGE_VALF);  // inf in: no overflow
  EXPECT_EQ(c[PrecisionOp::residual_add].overflow, 1);
  EXPECT_EQ(c[PrecisionOp::softmax_exp].overflow, 1);
  EXPECT_EQ(c[PrecisionOp::softmax_exp].results, 2);
  EXPECT_EQ(c[PrecisionOp::softmax_exp].max_abs, 59872.0);
  EXPECT_EQ(c[PrecisionOp::gemm].underflow, 1);
  EXPECT_EQ(c[PrecisionOp::gemm].subnormal, 1);
  EXPECT_EQ(c[PrecisionOp::softmax_max_sub].nan, 1);
  EXPECT_EQ(c[PrecisionOp::softmax_div].overflow, 0);
  EXPECT_EQ(c.total_overflow(), 2);
  EXPECT_EQ(c.total_nan(), 1);
  EXPECT_NE(c.summary().find("softmax_exp: 2 results, 1 overflow"), std::string::npos);
  OverflowCounters twice = c;
  twice.merge(c);
  EXPECT_EQ(twice.total_overflow(), 4);
}

TEST(Precision, DotAccumulationInFormatOverflowsWhereF32DoesNot) {
  // 300·300 = 90000 > 65504: accumulating in f16 gives inf - inf = NaN, in f32 the exact 0.
  const float a[2] = {300, 300}, b[2] = {300, -300};
  OverflowCounters in_format, in_f32;
  EXPECT_TRUE(std::isnan(emulated_dot(DType::f16, DType::f16, a, 1, b, 1, 2,
                                      PrecisionOp::qk_matmul, &in_format)));
  EXPECT_EQ(emulated_dot(DType::f16, DType::f32, a, 1, b, 1, 2, PrecisionOp::qk_matmul, &in_f32), 0);
  EXPECT_EQ(in_format[PrecisionOp::qk_matmul].overflow, 2);
  EXPECT_EQ(in_format[PrecisionOp::qk_matmul].nan, 1);
  EXPECT_EQ(in_f32.total_overflow() + in_f32.total_nan(), 0);
  // Partial sums in f16 lose the small terms (1 + 2^-11 ... stays 1); f32 keeps them.
  float ones[16], tiny[16];
  for (int i = 0; i < 16; ++i) ones[i] = 1.0f, tiny[i] = i == 0 ? 1.0f : 0x1p-11f;
  EXPECT_EQ(emulated_dot(DType::f16, DType::f16, ones, 1, tiny, 1, 16, PrecisionOp::gemm, nullptr), 1.0f);
  EXPECT_EQ(emulated_dot(DType::f16, DType::f32, ones, 1, tiny, 1, 16, PrecisionOp::gemm, nullptr),
            static_cast<float>(round_to(DType::f16, 1 + 15 * 0x1p-11)));
  EXPECT_THROW(emulated_dot(DType::f16, DType::bf16, a, 1, b, 1, 2, PrecisionOp::gemm, nullptr), Error);
}

TEST(Precision, ElementwiseHelpers) {
  OverflowCounters c;
  const float x[3] = {1.0f, 2000.0f, -0.001f};
  float y[3];
  // Embedding scale sqrt(3072) in bf16 multiplies by 55.5, not 55.4256.
  emulated_scale(DType::bf16, x, std::sqrt(3072.0), y, 3, PrecisionOp::embedding_scale, &c);
  EXPECT_EQ(y[0], 55.5f);
  emulated_scale(DType::f16, x, std::sqrt(4096.0), y, 3, PrecisionOp::embedding_scale, &c);
  EXPECT_EQ(y[1], HUGE_VALF);  // 2000 · 64 = 128000 > 65504 (claim E6)
  EXPECT_EQ(c[PrecisionOp::embedding_scale].overflow, 1);
  emulated_add(DType::f16, y, x, y, 3, PrecisionOp::residual_add, &c);
  EXPECT_EQ(y[0], 65.0f);
  float m[4] = {1, 2, 3, 4}, n[4] = {1, 0, 0, 1}, out[4];
  emulated_matmul(DType::bf16, DType::f32, m, n, out, 2, 2, 2, PrecisionOp::gemm, &c);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[3], 4.0f);
  float v[2] = {0.1f, 1e6f};
  emulated_cast(DType::f16, v, 2, PrecisionOp::input_cast, &c);
  EXPECT_EQ(v[0], 0.0999755859375f);
  EXPECT_EQ(c[PrecisionOp::input_cast].overflow, 1);
}

}  // namespace
}  // namespace scalelab
