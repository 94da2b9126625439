// The register-blocked micro-tile of scalelab's matrix products, for every Highway target: the
// inner loop shared by the flash-attention kernel's tile products (attention_flash_simd.cpp) and
// the packed GEMM (gemm_packed_simd.cpp).
//
//   sums[m, 0 : W] = sum_{k < K} A(m, k) · B[k, 0 : W]      for m < M, W = 2 vectors,
//   A(m, k) = A[m · a_row + k · a_col],  B row k at B + k · ldb
//
// held in 2M vector accumulators (per k: two vector loads of B, M broadcasts of A, 2M FMAs, as in
// BLIS), then handed to store(m, sum_0, sum_1) row by row: the caller decides where they go.
// Included after hwy/foreach_target.h and hwy/highway.h, once per target (the guard toggles); .hpp
// so that the ledger's engine digest (CMakeLists.txt) covers it.
#if defined(SCALELAB_KERNELS_MICRO_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SCALELAB_KERNELS_MICRO_TILE_INL_H_
#undef SCALELAB_KERNELS_MICRO_TILE_INL_H_
#else
#define SCALELAB_KERNELS_MICRO_TILE_INL_H_
#endif

#include <cstddef>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows of the micro-tile: 12 × 2 vectors of accumulators where there are 32 vector registers
// (AVX-512, NEON, SVE), 6 × 2 where there are 16 (AVX2, SSE4): 2M accumulators, 2 B vectors and
// one broadcast.
// kMicroRows1: rows of the one-vector-wide micro-tile (MicroTileSums1: M accumulators, one B
// vector and one broadcast), 16 where there are 32 registers, so that a 16-row product (the
// short-key attention path's 16 keys or 16 query lanes) is one pass over B instead of 12 + 4.
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3) || HWY_ARCH_ARM_A64
constexpr size_t kMicroRows = 12, kMicroRows1 = 16;
#else
constexpr size_t kMicroRows = 6, kMicroRows1 = 6;
#endif

// W: columns of one micro-tile.
HWY_INLINE size_t MicroTileWidth() { return 2 * hn::Lanes(hn::ScalableTag<float>()); }

template <size_t M, class Store>
HWY_INLINE void MicroTileSums(size_t K, const float* HWY_RESTRICT A, size_t a_row, size_t a_col,
                              const float* HWY_RESTRICT B, size_t ldb, const Store& store) {
  static_assert(M >= 1 && M <= 12, "a micro-tile has 1 to 12 rows");
  const hn::ScalableTag<float> d;
  const size_t L = hn::Lanes(d);
#define SL_DECLARE(m) auto c##m##_0 = hn::Zero(d), c##m##_1 = hn::Zero(d);
#define SL_ROW(m)                                \
  if constexpr (M > m) {                         \
    const auto am = hn::Set(d, ak[m * a_row]);   \
    c##m##_0 = hn::MulAdd(am, b0, c##m##_0);     \
    c##m##_1 = hn::MulAdd(am, b1, c##m##_1);     \
  }
#define SL_STORE(m) \
  if constexpr (M > m) store(size_t{m}, c##m##_0, c##m##_1);
#define SL_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
  SL_ALL(SL_DECLARE)
  size_t k = 0;
  // Unrolled by 2 (less loop overhead on the FMA ports) where there are 32 vector registers; with
  // 16 (AVX2) GCC 12 then spills an accumulator to the stack (measured: 0.56 of the FMA peak
  // instead of 0.86 on the GEMM table's shapes), so one k per iteration there.
  constexpr bool kUnroll = kMicroRows == 12;
  for (; kUnroll && k + 2 <= K; k += 2) {
    {
      const auto b0 = hn::LoadU(d, B + k * ldb), b1 = hn::LoadU(d, B + k * ldb + L);
      const float* ak = A + k * a_col;
      SL_ALL(SL_ROW)
    }
    {
      const auto b0 = hn::LoadU(d, B + (k + 1) * ldb), b1 = hn::LoadU(d, B + (k + 1) * ldb + L);
      const float* ak = A + (k + 1) * a_col;
      SL_ALL(SL_ROW)
    }
  }
  for (; k < K; ++k) {
    const auto b0 = hn::LoadU(d, B + k * ldb), b1 = hn::LoadU(d, B + k * ldb + L);
    const float* ak = A + k * a_col;
    SL_ALL(SL_ROW)
  }
  SL_ALL(SL_STORE)
#undef SL_ALL
#undef SL_STORE
#undef SL_ROW
#undef SL_DECLARE
}

// The same product one vector wide (W = 1 vector): sums[m, 0 : L], for the last vector of a width
// that is a multiple of L but not of 2L (a head of 16 dimensions on AVX-512 would otherwise be
// padded to 32 and half of every product wasted). store(m, sum).
template <size_t M, class Store>
HWY_INLINE void MicroTileSums1(size_t K, const float* HWY_RESTRICT A, size_t a_row, size_t a_col,
                               const float* HWY_RESTRICT B, size_t ldb, const Store& store) {
  static_assert(M >= 1 && M <= 16, "a one-vector micro-tile has 1 to 16 rows");
  const hn::ScalableTag<float> d;
#define SL_DECLARE(m) auto c##m = hn::Zero(d);
#define SL_ROW(m) \
  if constexpr (M > m) c##m = hn::MulAdd(hn::Set(d, ak[m * a_row]), b0, c##m);
#define SL_STORE(m) \
  if constexpr (M > m) store(size_t{m}, c##m);
#define SL_ALL(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
  SL_ALL(SL_DECLARE)
  for (size_t k = 0; k < K; ++k) {
    const auto b0 = hn::LoadU(d, B + k * ldb);
    const float* ak = A + k * a_col;
    SL_ALL(SL_ROW)
  }
  SL_ALL(SL_STORE)
#undef SL_ALL
#undef SL_STORE
#undef SL_ROW
#undef SL_DECLARE
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#endif  // SCALELAB_KERNELS_MICRO_TILE_INL_H_
