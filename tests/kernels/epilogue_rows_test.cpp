// kernels/epilogue_rows against plain loops, bit for bit: rows of widths around the vector width
// (tails), a row stride wider than the row (nothing outside the rows written), and the values whose
// handling is the contract: NaN and -0 kept by the ReLU, a NaN or -0 in the mask's a giving 0,
// subnormals and infinities. With a bf16 copy asked for, the same values in C and every element's
// bits f32_to_bf16_bits' of the result, on every compiled SIMD target. The passes on bf16 bits
// against their twins (which widen to float and compare there) over every one of the 65536 bit
// patterns, in C and in the mask's a, on every target, and against the float passes.
#include "scalelab/kernels/epilogue_rows.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/kernels/precision.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

// n values from N(0, 1) with the special ones mixed in at fixed places.
std::vector<float> with_specials(int64_t n, uint64_t seed) {
  std::vector<float> v = testing::normals<float>(n, seed);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            -0.0f,
                            0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (size_t i = 0; i < v.size(); i += 5) v[i] = specials[(i / 5) % 8];
  return v;
}

TEST(EpilogueRows, ReluAndMaskEqualPlainLoopsBitForBit) {
  for (int64_t n : {1, 7, 15, 16, 17, 31, 33, 64, 100}) {
    const int64_t m = 5, ldc = n + 3;
    const std::vector<float> c0 = with_specials(m * ldc, 1 + n), a = with_specials(m * n, 100 + n);
    std::vector<float> relu = c0, relu_want = c0, mask = c0, mask_want = c0;
    relu_rows(relu.data(), m, n, ldc);
    mask_rows(mask.data(), a.data(), m, n, ldc);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float& r = relu_want[i * ldc + j];
        r = r < 0.0f ? 0.0f : r;
        float& k = mask_want[i * ldc + j];
        k = a[i * n + j] > 0.0f ? k : 0.0f;
      }
    EXPECT_EQ(std::memcmp(relu.data(), relu_want.data(), relu.size() * sizeof(float)), 0) << "n " << n;
    EXPECT_EQ(std::memcmp(mask.data(), mask_want.data(), mask.size() * sizeof(float)), 0) << "n " << n;
  }
}

// The pass that also writes C's bf16 copy: C as without it, and each element's bits those of the
// rounding twin (NaN, -0, subnormals, infinities, the vector body and the scalar tail); nothing
// past a row's n bits written.
TEST(EpilogueRows, WithBf16CopyEqualsTheTwinsOnEveryTarget) {
  const std::vector<std::string> targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  for (const std::string& target : targets) {
    force_simd_target(target);
    for (int64_t n : {1, 7, 16, 17, 33, 64, 100}) {
      const int64_t m = 4, ldc = n + 2;
      const std::vector<float> c0 = with_specials(m * ldc, 7 + n), a = with_specials(m * n, 70 + n);
      for (bool relu : {true, false}) {
        std::vector<float> plain = c0, fused = c0;
        std::vector<uint16_t> bits(static_cast<size_t>(m * n + 1), 0xABCD);
        if (relu) {
          relu_rows(plain.data(), m, n, ldc);
          relu_rows(fused.data(), m, n, ldc, bits.data());
        } else {
          mask_rows(plain.data(), a.data(), m, n, ldc);
          mask_rows(fused.data(), a.data(), m, n, ldc, bits.data());
        }
        const std::string where = target + (relu ? ", relu" : ", mask") + ", n " + std::to_string(n);
        EXPECT_EQ(std::memcmp(plain.data(), fused.data(), plain.size() * sizeof(float)), 0) << where;
        int wrong = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            wrong += bits[i * n + j] != f32_to_bf16_bits(plain[i * ldc + j]);
        EXPECT_EQ(wrong, 0) << where;
        EXPECT_EQ(bits[m * n], 0xABCD) << where << ": wrote past the copy";
      }
    }
  }
  force_simd_target("");
}

TEST(EpilogueRows, ReluKeepsNaNAndNegativeZero) {
  std::vector<float> row = {std::numeric_limits<float>::quiet_NaN(), -0.0f, -1.0f, 2.0f};
  relu_rows(row.data(), 1, 4, 4);
  EXPECT_TRUE(std::isnan(row[0]));
  EXPECT_TRUE(std::signbit(row[1]) && row[1] == 0.0f);
  EXPECT_EQ(row[2], 0.0f);
  EXPECT_FALSE(std::signbit(row[2]));
  EXPECT_EQ(row[3], 2.0f);
}

// Every bf16 bit pattern (a row of 65536, then rows of width around the vector width with a wider
// stride): relu_bf16_rows and mask_bf16_rows equal their twins on every target, which equal the
// float passes on the widened values rounded back (exact: every bf16 widens exactly); nothing
// outside the rows is written.
TEST(EpilogueRows, Bf16PassesEqualTheirTwinsOnEveryBitPattern) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<uint16_t> reversed(all.rbegin(), all.rend());  // every a against another c
  const std::vector<std::string> targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  for (const std::string& target : targets) {
    force_simd_target(target);
    for (int64_t n : {65536, 1, 15, 16, 17, 33, 100}) {
      const int64_t m = n == 65536 ? 1 : 5, ldc = n == 65536 ? n : n + 3;
      std::vector<uint16_t> c0(static_cast<size_t>(m * ldc)), a(static_cast<size_t>(m * n));
      for (size_t i = 0; i < c0.size(); ++i) c0[i] = reversed[(i * 7919) % 65536];
      for (size_t i = 0; i < a.size(); ++i) a[i] = all[(i * 104729 + 13) % 65536];
      if (n == 65536) a = all;
      std::vector<uint16_t> relu = c0, relu_twin = c0, mask = c0, mask_twin = c0;
      relu_bf16_rows(relu.data(), m, n, ldc);
      relu_bf16_rows_plain(relu_twin.data(), m, n, ldc);
      mask_bf16_rows(mask.data(), a.data(), m, n, ldc);
      mask_bf16_rows_plain(mask_twin.data(), a.data(), m, n, ldc);
      const std::string where = target + ", n " + std::to_string(n);
      EXPECT_EQ(relu, relu_twin) << where;
      EXPECT_EQ(mask, mask_twin) << where;
      // the twins against the float passes on the widened values (padding left as it was)
      std::vector<float> wide(c0.size()), keep(a.size());
      for (size_t i = 0; i < c0.size(); ++i) wide[i] = bf16_bits_to_f32(c0[i]);
      for (size_t i = 0; i < a.size(); ++i) keep[i] = bf16_bits_to_f32(a[i]);
      std::vector<float> wide_relu = wide, wide_mask = wide;
      relu_rows(wide_relu.data(), m, n, ldc);
      mask_rows(wide_mask.data(), keep.data(), m, n, ldc);
      int wrong = 0;
      for (size_t i = 0; i < c0.size(); ++i) {
        const float r = bf16_bits_to_f32(relu_twin[i]), k = bf16_bits_to_f32(mask_twin[i]);
        wrong += std::memcmp(&r, &wide_relu[i], 4) != 0 || std::memcmp(&k, &wide_mask[i], 4) != 0;
      }
      EXPECT_EQ(wrong, 0) << where;
    }
  }
  force_simd_target("");
}

}  // namespace
}  // namespace scalelab
