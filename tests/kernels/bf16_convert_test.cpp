// kernels/bf16_convert (the fast bit-arithmetic rounding) against its twin f32_to_bf16_bits
// (kernels/precision, which rounds through double): special values, ties, the overflow edge,
// subnormals, NaN payloads that a naive carry would turn into infinity, and random bit patterns,
// on every compiled SIMD target.
#include "scalelab/kernels/bf16_convert.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

namespace scalelab {
namespace {

float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// Every value through both rows; the fast bits must equal the twin's, the widened values too.
void expect_matches_twin_on_this_target(const std::vector<float>& xs) {
  std::vector<uint16_t> bits(xs.size());
  std::vector<float> rounded(xs.size());
  f32_to_bf16_row(xs.data(), static_cast<int64_t>(xs.size()), bits.data());
  round_row_to_bf16(xs.data(), static_cast<int64_t>(xs.size()), rounded.data());
  int mismatches = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const uint16_t want = f32_to_bf16_bits(xs[i]);
    const float want_value = bf16_bits_to_f32(want);
    const bool same_value = std::isnan(want_value) ? std::isnan(rounded[i])
                                                   : std::memcmp(&want_value, &rounded[i], 4) == 0;
    if (bits[i] != want || !same_value) {
      if (++mismatches <= 5) {
        uint32_t u;
        std::memcpy(&u, &xs[i], 4);
        ADD_FAILURE() << "x bits 0x" << std::hex << u << ": fast 0x" << bits[i] << ", twin 0x"
                      << want << "; widened " << rounded[i] << " vs " << want_value;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << " of " << xs.size();
}

void expect_matches_twin(const std::vector<float>& xs) {
  for (const std::string& target : simd_targets()) {
    SCOPED_TRACE("SIMD target " + target);
    force_simd_target(target);
    expect_matches_twin_on_this_target(xs);
  }
  force_simd_target("");
}

TEST(Bf16Convert, SpecialValuesTiesAndEdges) {
  std::vector<float> xs = {
      0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY,
      from_bits(0x3F808000),  // 1 + 2^-8: a tie, rounds to the even 1
      from_bits(0x3F818000),  // 1 + 3·2^-8: a tie, rounds up to the even 1 + 2^-6
      from_bits(0x3F808001),  // just above the tie: up
      from_bits(0x3F807FFF),  // just below: down
      from_bits(0x7F7FFFFF),  // largest float: rounds to +inf in bf16
      from_bits(0xFF7FFFFF),  // and to -inf
      from_bits(0x7F7F7FFF),  // largest value that stays finite
      from_bits(0x00000001),  // smallest subnormal: rounds to 0
      from_bits(0x00008000),  // a subnormal tie, to even (0)
      from_bits(0x00018000),  // a subnormal tie, to even (up)
      from_bits(0x007FFFFF),  // largest subnormal: rounds to the smallest normal
      from_bits(0x7FC00000), from_bits(0xFFC00000),  // quiet NaNs
      from_bits(0x7F800001), from_bits(0xFF800001),  // NaN with a low payload (carry -> inf if naive)
      from_bits(0x7FFFFFFF)};
  expect_matches_twin(xs);
}

TEST(Bf16Convert, RandomBitPatternsAndNormals) {
  Rng rng(7);
  std::vector<float> xs;
  for (int i = 0; i < 200000; ++i) xs.push_back(from_bits(static_cast<uint32_t>(rng.next_u64())));
  for (int i = 0; i < 100000; ++i) xs.push_back(static_cast<float>(rng.normal()));
  expect_matches_twin(xs);
}

// One NaN or subnormal at each position of a row of normal values (several vectors and a scalar
// tail on every target).
TEST(Bf16Convert, OneExceptionalValueAtEveryPosition) {
  Rng rng(11);
  std::vector<float> base;
  for (int i = 0; i < 96 + 7; ++i) base.push_back(static_cast<float>(rng.normal()));
  for (const uint32_t odd : {0x7F800001u, 0xFFC01234u, 0x00008000u, 0x80018000u}) {
    for (size_t p = 0; p < base.size(); ++p) {
      std::vector<float> xs = base;
      xs[p] = from_bits(odd);
      expect_matches_twin(xs);
    }
  }
}

TEST(Bf16Convert, RoundInPlace) {
  std::vector<float> xs = {1.00390625f, -3.14159f, 1e-40f}, want(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) want[i] = bf16_bits_to_f32(f32_to_bf16_bits(xs[i]));
  round_row_to_bf16(xs.data(), static_cast<int64_t>(xs.size()), xs.data());
  EXPECT_EQ(xs, want);
}

}  // namespace
}  // namespace scalelab
