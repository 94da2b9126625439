// The column sums of kernels/column_sums.hpp: the plain twin, and the float kernel for every
// Highway target. Per chunk of rows and strip of up to 4 vectors of columns, the even and odd
// rows' accumulators (8 vectors) stay in registers over the chunk's rows and their sum goes to the
// chunk's row of partials; the last columns that fill no whole vector are summed as the twin sums
// them. The partials are then added down each column in chunk order.
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

// One vector of dy's floats at p: float, or bf16 bits widened (exactly) to float.
HWY_INLINE hn::Vec<DF> LoadValues(DF d, const float* HWY_RESTRICT p) { return hn::LoadU(d, p); }
HWY_INLINE hn::Vec<DF> LoadValues(DF d, const uint16_t* HWY_RESTRICT p) {
  const hn::RebindToUnsigned<DF> du32;
  const hn::Rebind<uint16_t, DF> du16;
  return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du32, hn::LoadU(du16, p))));
}
HWY_INLINE float ValueAt(const float* p) { return *p; }
HWY_INLINE float ValueAt(const uint16_t* p) { return bf16_bits_to_f32(*p); }

// kV vectors of columns of one chunk: rows [0, n) of dy (row stride ld) added in the two chains,
// partial[0 : kV·L) = even + odd; with kBits each vector read is also stored to bits (row stride
// ld) as bf16 bits (bf16_round-inl.hpp). In: float, or uint16_t for dy held as bf16 bits.
template <size_t kV, bool kBits, class In>
HWY_INLINE void StripPartials(const In* HWY_RESTRICT dy, int64_t n, int64_t ld,
                              float* HWY_RESTRICT partial, uint16_t* HWY_RESTRICT bits) {
  const DF d;
  const size_t L = hn::Lanes(d);
  hn::Vec<DF> even[kV], odd[kV];
  for (size_t v = 0; v < kV; ++v) even[v] = hn::Zero(d), odd[v] = hn::Zero(d);
  const auto add_row = [&](hn::Vec<DF>* acc, int64_t r) {
    for (size_t v = 0; v < kV; ++v) {
      const auto x = LoadValues(d, dy + r * ld + v * L);
      acc[v] = hn::Add(acc[v], x);
      if constexpr (kBits) StoreBf16Bits(d, x, bits + r * ld + v * L);
    }
  };
  int64_t r = 0;
  for (; r + 2 <= n; r += 2) add_row(even, r), add_row(odd, r + 1);
  if (r < n) add_row(even, r);
  for (size_t v = 0; v < kV; ++v) hn::StoreU(hn::Add(even[v], odd[v]), d, partial + v * L);
}

// One chunk, rows [0, n) of dy (row stride ld), columns [0, width): partial[o] = even + odd, and
// with bits (row stride ld; float dy only) the bf16 bits of every element read.
template <class In>
void ChunkPartials(const In* HWY_RESTRICT dy, int64_t n, int64_t ld, int64_t width,
                   float* HWY_RESTRICT partial, uint16_t* HWY_RESTRICT bits) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(DF()));
  // the strips, without or with the bf16 copy (a branch per strip, not per vector)
  const auto strip = [&](auto vectors, int64_t col) {
    constexpr size_t kV = decltype(vectors)::value;
    if (bits) StripPartials<kV, true>(dy + col, n, ld, partial + col, bits + col);
    else StripPartials<kV, false>(dy + col, n, ld, partial + col, nullptr);
  };
  int64_t c = 0;
  for (; c + 4 * L <= width; c += 4 * L) strip(std::integral_constant<size_t, 4>(), c);
  for (; c + L <= width; c += L) strip(std::integral_constant<size_t, 1>(), c);
  for (; c < width; ++c) {  // the last columns, one at a time, in the same order
    float even = 0.0f, odd = 0.0f;
    int64_t r = 0;
    for (; r + 2 <= n; r += 2) even += ValueAt(dy + r * ld + c), odd += ValueAt(dy + (r + 1) * ld + c);
    if (r < n) even += ValueAt(dy + r * ld + c);
    partial[c] = even + odd;
    if (bits)
      for (r = 0; r < n; ++r) bits[r * ld + c] = f32_to_bf16_bits(ValueAt(dy + r * ld + c));
  }
}

// Chunks [k0, k1) of dy[rows × ld], columns [0, width): chunk k's partials into
// partials[k · ldp ..] (and the bf16 bits of its rows into bits, row stride ld, where given).
template <class In>
void PartialsOfChunksOf(const In* dy, int64_t rows, int64_t ld, int64_t k0, int64_t k1,
                        int64_t width, float* partials, int64_t ldp, uint16_t* bits) {
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t r0 = k * kColumnSumRowChunk;
    ChunkPartials(dy + r0 * ld, std::min(kColumnSumRowChunk, rows - r0), ld, width, partials + k * ldp,
                  bits ? bits + r0 * ld : nullptr);
  }
}
void PartialsOfChunks(const float* dy, int64_t rows, int64_t ld, int64_t k0, int64_t k1,
                      int64_t width, float* partials, int64_t ldp, uint16_t* bits) {
  PartialsOfChunksOf(dy, rows, ld, k0, k1, width, partials, ldp, bits);
}
void PartialsOfBf16Chunks(const uint16_t* dy, int64_t rows, int64_t ld, int64_t k0, int64_t k1,
                          int64_t width, float* partials, int64_t ldp) {
  PartialsOfChunksOf(dy, rows, ld, k0, k1, width, partials, ldp, nullptr);
}

// sums[o] += ((0 + p_0) + p_1) + ... over chunks [0, chunks), p_k = partials[k · ldp + o], for
// columns [0, width).
void AddChunkPartials(const float* HWY_RESTRICT partials, int64_t chunks, int64_t ldp,
                      int64_t width, float* HWY_RESTRICT sums) {
  const DF d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto strip = [&](auto vectors, int64_t col) {
    constexpr size_t kV = decltype(vectors)::value;
    hn::Vec<DF> total[kV];
    for (size_t v = 0; v < kV; ++v) total[v] = hn::Zero(d);
    for (int64_t k = 0; k < chunks; ++k)
      for (size_t v = 0; v < kV; ++v)
        total[v] = hn::Add(total[v], hn::LoadU(d, partials + k * ldp + col + v * L));
    for (size_t v = 0; v < kV; ++v)
      hn::StoreU(hn::Add(hn::LoadU(d, sums + col + v * L), total[v]), d, sums + col + v * L);
  };
  int64_t c = 0;
  for (; c + 4 * L <= width; c += 4 * L) strip(std::integral_constant<size_t, 4>(), c);
  for (; c + L <= width; c += L) strip(std::integral_constant<size_t, 1>(), c);
  for (; c < width; ++c) {
    float total = 0.0f;
    for (int64_t k = 0; k < chunks; ++k) total += partials[k * ldp + c];
    sums[c] += total;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/thread_partials.hpp"

namespace scalelab {
HWY_EXPORT(PartialsOfChunks);
HWY_EXPORT(PartialsOfBf16Chunks);
HWY_EXPORT(AddChunkPartials);

template <class T>
void add_column_sums_plain(const T* dy, int64_t rows, int64_t cols, T* sums) {
  for (int64_t o = 0; o < cols; ++o) {
    T total = 0;
    for (int64_t r0 = 0; r0 < rows; r0 += kColumnSumRowChunk) {
      const int64_t r1 = std::min(rows, r0 + kColumnSumRowChunk);
      T even = 0, odd = 0;
      int64_t r = r0;
      for (; r + 2 <= r1; r += 2) even += dy[r * cols + o], odd += dy[(r + 1) * cols + o];
      if (r < r1) even += dy[r * cols + o];
      total += even + odd;
    }
    sums[o] += total;
  }
}

namespace {

constexpr int64_t kVectorFloats = 16;   // column blocks are whole 512-bit vectors
constexpr int64_t kAddBlock = 1024;     // columns per thread when the partials are added up

// In: float, or uint16_t (dy as bf16 bits; then bits is null).
template <class In>
void column_sums(const In* dy, int64_t rows, int64_t cols, float* sums, uint16_t* bits) {
  apply_simd_environment();
  if (cols <= 0) return;
  const int64_t chunks = (rows + kColumnSumRowChunk - 1) / kColumnSumRowChunk;
  int64_t ldp = 0;  // the partials' row stride: chunk k's at p + k · ldp (every element written)
  float* const p = thread_partials<float>(chunks, cols, &ldp);

  // Runs of chunks, one per thread; where there are fewer chunks than threads, column blocks too.
  const int64_t threads = num_threads();
  const int64_t row_parts = std::max<int64_t>(1, std::min(threads, chunks));
  const int64_t col_parts =
      std::min((threads + row_parts - 1) / row_parts, (cols + kVectorFloats - 1) / kVectorFloats);
  const int64_t width = ((cols + col_parts - 1) / col_parts + kVectorFloats - 1) / kVectorFloats *
                        kVectorFloats;
  const int64_t col_blocks = (cols + width - 1) / width;
  parallel_for(row_parts * col_blocks, [&](int64_t unit) {
    const int64_t part = unit / col_blocks, block = unit % col_blocks;
    const int64_t k0 = chunks * part / row_parts, k1 = chunks * (part + 1) / row_parts;
    const int64_t c0 = block * width, w = std::min(cols, c0 + width) - c0;
    if constexpr (std::is_same_v<In, float>)
      HWY_DYNAMIC_DISPATCH(PartialsOfChunks)(dy + c0, rows, cols, k0, k1, w, p + c0, ldp,
                                             bits ? bits + c0 : nullptr);
    else
      HWY_DYNAMIC_DISPATCH(PartialsOfBf16Chunks)(dy + c0, rows, cols, k0, k1, w, p + c0, ldp);
  });
  parallel_for((cols + kAddBlock - 1) / kAddBlock, [&](int64_t block) {
    const int64_t c0 = block * kAddBlock, w = std::min(cols, c0 + kAddBlock) - c0;
    HWY_DYNAMIC_DISPATCH(AddChunkPartials)(p + c0, chunks, ldp, w, sums + c0);
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

void add_column_sums_bf16(const uint16_t* dy, int64_t rows, int64_t cols, float* sums) {
  column_sums(dy, rows, cols, sums, nullptr);
}

void add_column_sums(const double* dy, int64_t rows, int64_t cols, double* sums) {
  add_column_sums_plain(dy, rows, cols, sums);
}

template void add_column_sums_plain<float>(const float*, int64_t, int64_t, float*);
template void add_column_sums_plain<double>(const double*, int64_t, int64_t, double*);

}  // namespace scalelab
#endif  // HWY_ONCE
