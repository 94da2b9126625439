// The column sums of kernels/column_sums.hpp: the plain twin, and the float kernel for every
// Highway target. A thread's block of columns is read in chunks of 32 rows; per strip of up to 4
// vectors of columns the even and odd rows' accumulators (8 vectors) stay in registers over the
// chunk and wait in L1 between chunks; the last columns that fill no whole vector are summed as the
// twin sums them.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/column_sums.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/bf16_round-inl.hpp"
#include "scalelab/kernels/column_sums.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#include <algorithm>
#include <cstddef>
#include <type_traits>

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;

// Rows of a chunk (even, so a row's parity is the same in the chunk as in dy): the chunk's rows of
// a column block are read from L1/L2 once per strip, with a few pages per chunk in the TLB.
constexpr int64_t kRowChunk = 32;
constexpr int64_t kMaxWidth = 512;  // columns of one call (the block of a thread)

// kV vectors of columns: rows [0, rows) of dy (row stride ld) added to the even and odd rows'
// accumulators even[0 : kV·L], odd[0 : kV·L], held in registers over the rows; with bits (row
// stride ld; kBits), each vector read is also stored there as bf16 bits (bf16_round-inl.hpp).
template <size_t kV, bool kBits>
HWY_INLINE void StripSums(const float* HWY_RESTRICT dy, int64_t rows, int64_t ld,
                          float* HWY_RESTRICT even_sums, float* HWY_RESTRICT odd_sums,
                          uint16_t* HWY_RESTRICT bits) {
  const DF d;
  const size_t L = hn::Lanes(d);
  hn::Vec<DF> even[kV], odd[kV];
  for (size_t v = 0; v < kV; ++v)
    even[v] = hn::Load(d, even_sums + v * L), odd[v] = hn::Load(d, odd_sums + v * L);
  const auto add_row = [&](hn::Vec<DF>* acc, int64_t r) {
    for (size_t v = 0; v < kV; ++v) {
      const auto x = hn::LoadU(d, dy + r * ld + v * L);
      acc[v] = hn::Add(acc[v], x);
      if constexpr (kBits) StoreBf16Bits(d, x, bits + r * ld + v * L);
    }
  };
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) add_row(even, r), add_row(odd, r + 1);
  if (r < rows) add_row(even, r);
  for (size_t v = 0; v < kV; ++v)
    hn::Store(even[v], d, even_sums + v * L), hn::Store(odd[v], d, odd_sums + v * L);
}

// Columns [0, width) of dy (row stride ld, width <= kMaxWidth) into sums[0 : width); with bits,
// their bf16 bits too (row stride ld).
void ColumnBlockSums(const float* HWY_RESTRICT dy, int64_t rows, int64_t ld, int64_t width,
                     float* HWY_RESTRICT sums, uint16_t* HWY_RESTRICT bits) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(DF()));
  HWY_ALIGN float even[kMaxWidth], odd[kMaxWidth];
  std::fill(even, even + width, 0.0f);
  std::fill(odd, odd + width, 0.0f);
  for (int64_t r0 = 0; r0 < rows; r0 += kRowChunk) {
    const float* chunk = dy + r0 * ld;
    uint16_t* chunk_bits = bits ? bits + r0 * ld : nullptr;
    const int64_t n = std::min(kRowChunk, rows - r0);
    int64_t c = 0;
    // the strips, without or with the bf16 copy (a branch per call, not per vector)
    const auto strip = [&](auto vectors, int64_t col) {
      constexpr size_t kV = decltype(vectors)::value;
      if (chunk_bits) StripSums<kV, true>(chunk + col, n, ld, even + col, odd + col, chunk_bits + col);
      else StripSums<kV, false>(chunk + col, n, ld, even + col, odd + col, nullptr);
    };
    for (; c + 4 * L <= width; c += 4 * L) strip(std::integral_constant<size_t, 4>(), c);
    for (; c + L <= width; c += L) strip(std::integral_constant<size_t, 1>(), c);
    for (; c < width; ++c) {  // the last columns, one at a time, in the same order
      int64_t r = 0;
      for (; r + 2 <= n; r += 2) even[c] += chunk[r * ld + c], odd[c] += chunk[(r + 1) * ld + c];
      if (r < n) even[c] += chunk[r * ld + c];
      if (chunk_bits)
        for (r = 0; r < n; ++r) chunk_bits[r * ld + c] = f32_to_bf16_bits(chunk[r * ld + c]);
    }
  }
  for (int64_t c = 0; c < width; ++c) sums[c] += even[c] + odd[c];
}

void ColumnSums(const float* dy, int64_t rows, int64_t ld, int64_t width, float* sums,
                uint16_t* bits) {
  for (int64_t c = 0; c < width; c += kMaxWidth)
    ColumnBlockSums(dy + c, rows, ld, std::min(kMaxWidth, width - c), sums + c,
                    bits ? bits + c : nullptr);
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "scalelab/core/parallel.hpp"

namespace scalelab {
HWY_EXPORT(ColumnSums);

namespace {

constexpr int64_t kMaxBlockWidth = 512;

// Columns per thread's block: the columns shared out, rounded up to 16, at most kMaxBlockWidth.
int64_t block_width(int64_t cols) {
  const int64_t per_thread = (cols + num_threads() - 1) / num_threads();
  return std::min(kMaxBlockWidth, (per_thread + 15) / 16 * 16);
}

}  // namespace

template <class T>
void add_column_sums_plain(const T* dy, int64_t rows, int64_t cols, T* sums) {
  for (int64_t o = 0; o < cols; ++o) {
    T even = 0, odd = 0;
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) even += dy[r * cols + o], odd += dy[(r + 1) * cols + o];
    if (r < rows) even += dy[r * cols + o];
    sums[o] += even + odd;
  }
}

namespace {
void column_sums(const float* dy, int64_t rows, int64_t cols, float* sums, uint16_t* bits) {
  apply_simd_environment();
  const int64_t width = block_width(cols);
  parallel_for((cols + width - 1) / width, [&](int64_t block) {
    const int64_t c0 = block * width, w = std::min(cols, c0 + width) - c0;
    HWY_DYNAMIC_DISPATCH(ColumnSums)(dy + c0, rows, cols, w, sums + c0, bits ? bits + c0 : nullptr);
  });
}
}  // namespace

void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* sums) {
  column_sums(dy, rows, cols, sums, nullptr);
}

void add_column_sums_and_bf16(const float* dy, int64_t rows, int64_t cols, float* sums,
                              uint16_t* bits) {
  column_sums(dy, rows, cols, sums, bits);
}

void add_column_sums(const double* dy, int64_t rows, int64_t cols, double* sums) {
  add_column_sums_plain(dy, rows, cols, sums);
}

template void add_column_sums_plain<float>(const float*, int64_t, int64_t, float*);
template void add_column_sums_plain<double>(const double*, int64_t, int64_t, double*);

}  // namespace scalelab
#endif  // HWY_ONCE
