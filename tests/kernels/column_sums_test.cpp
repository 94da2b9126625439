// kernels/column_sums against its plain twin, bit for bit: on every compiled SIMD target, widths
// around the vector widths and the strips of 4 vectors, odd and even row counts (the two chains of
// adds), row counts around the row chunk and with fewer chunks than threads (the columns split
// too), 1 and 2 threads; and the sums added to what the output held. The variant that also writes dy's bf16 copy: the same sums, every
// element's bits the rounding twin's. Bit-identical is the contract: the order of the adds is fixed.
#include "scalelab/kernels/column_sums.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

// The kernel's sums of a random dy[rows × cols] into sums preset to 0.5 + column index, against
// the twin's; a message naming the case when they differ in any bit.
void expect_twin_bits(int64_t rows, int64_t cols, const std::string& where) {
  const std::vector<float> dy = testing::normals<float>(rows * cols, 7 + rows * 1000 + cols, 2.0);
  std::vector<float> got(static_cast<size_t>(cols)), want(static_cast<size_t>(cols));
  for (int64_t o = 0; o < cols; ++o) got[o] = want[o] = 0.5f + static_cast<float>(o);
  add_column_sums(dy.data(), rows, cols, got.data());
  add_column_sums_plain(dy.data(), rows, cols, want.data());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
      << where << ": rows " << rows << ", cols " << cols;
}

TEST(ColumnSums, EveryTargetAndThreadCountEqualsPlainTwinBitForBit) {
  const std::vector<std::string> targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  for (const std::string& target : targets) {
    force_simd_target(target);
    for (int threads : {1, 2}) {
      const ScopedNumThreads scoped(threads);
      for (int64_t rows : {0, 1, 2, 3, 31, 32, 33, 64, 97, 200})
        for (int64_t cols : {1, 7, 8, 15, 16, 17, 33, 64, 65, 100, 256, 513, 1100})
          expect_twin_bits(rows, cols, target + ", " + std::to_string(threads) + " thread(s)");
    }
  }
  force_simd_target("");
}

// The sums with dy's bf16 copy written in the same pass: the sums are the twin's bit for bit and
// every element's bits are f32_to_bf16_bits' (the vector columns, the scalar last columns, blocks
// of both threads), NaN and a subnormal included.
TEST(ColumnSums, WithBf16CopyEqualsTwinSumsAndConvertsEveryElement) {
  for (const std::string& target : simd_targets()) {
    force_simd_target(target);
    for (int threads : {1, 2}) {
      const ScopedNumThreads scoped(threads);
      for (int64_t rows : {1, 33, 64})
        for (int64_t cols : {7, 16, 17, 64, 100, 513}) {
          std::vector<float> dy = testing::normals<float>(rows * cols, 3 + rows + cols, 2.0);
          dy[0] = std::nanf("");
          dy[dy.size() / 2] = 1e-40f;  // subnormal
          std::vector<float> got(static_cast<size_t>(cols), 0.25f), want = got;
          std::vector<uint16_t> bits(dy.size(), 0xABCD);
          add_column_sums_and_bf16(dy.data(), rows, cols, got.data(), bits.data());
          add_column_sums_plain(dy.data(), rows, cols, want.data());
          const std::string where = target + ", " + std::to_string(threads) + " thread(s), rows " +
                                    std::to_string(rows) + ", cols " + std::to_string(cols);
          EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << where;
          int wrong = 0;
          for (size_t i = 0; i < dy.size(); ++i) wrong += bits[i] != f32_to_bf16_bits(dy[i]);
          EXPECT_EQ(wrong, 0) << where;
        }
    }
  }
  force_simd_target("");
}

// dy held only as bf16 bits: the sums of the widened values, the twin's bit for bit on every
// target and thread count (vector columns, the scalar last columns, NaN and a subnormal).
TEST(ColumnSums, OfBf16BitsEqualTwinOfTheWidenedValues) {
  for (const std::string& target : simd_targets()) {
    force_simd_target(target);
    for (int threads : {1, 2}) {
      const ScopedNumThreads scoped(threads);
      for (int64_t rows : {1, 2, 33, 64, 200})
        for (int64_t cols : {1, 7, 16, 17, 64, 100, 513}) {
          const std::vector<float> values = testing::normals<float>(rows * cols, 5 + rows + cols, 2.0);
          std::vector<uint16_t> bits(values.size());
          for (size_t i = 0; i < values.size(); ++i) bits[i] = f32_to_bf16_bits(values[i]);
          bits[0] = 0x7FC0;                 // NaN
          bits[bits.size() / 2] = 0x0001;   // the smallest subnormal
          std::vector<float> widened(bits.size());
          for (size_t i = 0; i < bits.size(); ++i) widened[i] = bf16_bits_to_f32(bits[i]);
          std::vector<float> got(static_cast<size_t>(cols), 0.25f), want = got;
          add_column_sums_bf16(bits.data(), rows, cols, got.data());
          add_column_sums_plain(widened.data(), rows, cols, want.data());
          const std::string where = target + ", " + std::to_string(threads) + " thread(s), rows " +
                                    std::to_string(rows) + ", cols " + std::to_string(cols);
          EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << where;
        }
    }
  }
  force_simd_target("");
}

// The twin itself: even rows and odd rows summed apart, then added to what sums held.
TEST(ColumnSums, PlainTwinAddsTheEvenAndOddRowsToTheSums) {
  // dy = [[1, 10], [2, 20], [4, 40]]: even rows 1 + 4, odd row 2 per column (times 10 in the second)
  const std::vector<float> dy = {1, 10, 2, 20, 4, 40};
  std::vector<float> sums = {100, 1000};
  add_column_sums(dy.data(), 3, 2, sums.data());
  EXPECT_EQ(sums, (std::vector<float>{107, 1070}));
  const std::vector<double> dy_d = {1, 10, 2, 20, 4, 40};
  std::vector<double> sums_d = {0, 0};
  add_column_sums(dy_d.data(), 3, 2, sums_d.data());
  EXPECT_EQ(sums_d, (std::vector<double>{7, 70}));
}

// The order is observable: down a column of 1e8, 1, -1e8, 1 a row-order float sum gives 1 (the
// first 1 is lost against 1e8), the two chains give 2 (1e8 - 1e8 in the even one, 1 + 1 in the odd
// one). Every column, in whole vectors and in the tail, gives 2.
TEST(ColumnSums, SumsInTheTwoChainsOrder) {
  const int64_t cols = 37;
  std::vector<float> dy;
  for (float v : {1e8f, 1.0f, -1e8f, 1.0f}) dy.insert(dy.end(), cols, v);
  std::vector<float> sums(cols, 0.0f);
  add_column_sums(dy.data(), 4, cols, sums.data());
  EXPECT_EQ(sums, std::vector<float>(cols, 2.0f));
  float row_order = 0.0f;
  for (int64_t r = 0; r < 4; ++r) row_order += dy[r * cols];
  EXPECT_EQ(row_order, 1.0f);
}

// The chunks are observable too: down a column with 1e8 at row 0, -1e8 at row 32 and 1 at row 34
// (all even rows), one chain over all rows gives 1 (1e8 - 1e8, then + 1); the chunked order gives
// 0: chunk 1's partial -1e8 + 1 rounds to -1e8 (float's spacing there is 8), and 1e8 - 1e8 = 0.
// With 2 threads the two chunks are summed by different threads and added in the same order.
TEST(ColumnSums, AddsTheChunksPartialsInChunkOrder) {
  const int64_t rows = 2 * kColumnSumRowChunk, cols = 37;
  std::vector<float> dy(static_cast<size_t>(rows * cols), 0.0f);
  for (int64_t o = 0; o < cols; ++o)
    dy[o] = 1e8f, dy[32 * cols + o] = -1e8f, dy[34 * cols + o] = 1.0f;
  float one_chain = 0.0f;
  for (int64_t r = 0; r < rows; r += 2) one_chain += dy[r * cols];
  EXPECT_EQ(one_chain, 1.0f);
  for (int threads : {1, 2}) {
    const ScopedNumThreads scoped(threads);
    std::vector<float> sums(cols, 0.0f), twin(cols, 0.0f);
    add_column_sums(dy.data(), rows, cols, sums.data());
    add_column_sums_plain(dy.data(), rows, cols, twin.data());
    EXPECT_EQ(sums, std::vector<float>(cols, 0.0f)) << threads << " thread(s)";
    EXPECT_EQ(twin, std::vector<float>(cols, 0.0f));
  }
}

}  // namespace
}  // namespace scalelab
