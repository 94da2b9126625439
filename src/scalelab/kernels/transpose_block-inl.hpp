// The transpose of a row-major block into column-major order, for every Highway target: how the
// flash-attention kernel (attention_flash_simd.cpp, attention_short-inl.hpp) repacks k, v, q and
// do into the B operands of its tile products, and the packed GEMM (gemm_packed_simd.cpp) a
// transposed B into its panels and a row-major A into its slivers (TransposeToPanel).
//
//   dst[c · dst_ld + r] = src[r · ld + c]      for r < rows, c < cols
//
// Included after hwy/foreach_target.h and hwy/highway.h, once per target (the guard toggles); .hpp
// so that the ledger's engine digest (CMakeLists.txt) covers it.
#if defined(SCALELAB_KERNELS_TRANSPOSE_BLOCK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SCALELAB_KERNELS_TRANSPOSE_BLOCK_INL_H_
#undef SCALELAB_KERNELS_TRANSPOSE_BLOCK_INL_H_
#else
#define SCALELAB_KERNELS_TRANSPOSE_BLOCK_INL_H_
#endif

#include <cstddef>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {

// dst[c · dst_ld + r] = src[r · ld + c] for one kTransposeBlock × kTransposeBlock block, in
// registers (x86 targets with 8 or 16 float lanes; elsewhere kTransposeBlock = 0: no blocks).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// 16 × 16: 16 row loads, four rounds of 16 shuffles, 16 column stores. Row r = [a_r,0 .. a_r,15]
// in four 128-bit blocks b (columns 4b .. 4b+3).
constexpr size_t kTransposeBlock = 16;
// The first `rows` rows of the block (the others read as zero); every column stores its first
// `lanes` entries (mask), so that columns `lanes` floats apart do not overlap.
HWY_INLINE void TransposeBlockRows(const float* HWY_RESTRICT src, size_t ld, size_t rows,
                                   float* HWY_RESTRICT dst, size_t dst_ld, size_t lanes) {
  __m512 r[16], t[16];
  for (size_t i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_loadu_ps(src + i * ld) : _mm512_setzero_ps();
  const __mmask16 keep = static_cast<__mmask16>((1u << lanes) - 1u);
  const auto store = [&](float* to, __m512 v) { _mm512_mask_storeu_ps(to, keep, v); };
  for (size_t i = 0; i < 16; i += 2) {  // t_i: block b = [a_i,4b a_i+1,4b a_i,4b+1 a_i+1,4b+1]
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);  // t_i+1: the same for columns 4b+2, 4b+3
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (size_t g = 0; g < 16; g += 4) {  // r_g+k: block b = column 4b+k, rows g .. g+3
    const auto pairs = [&](size_t x, size_t y, bool high) {
      const __m512d xd = _mm512_castps_pd(t[x]), yd = _mm512_castps_pd(t[y]);
      return _mm512_castpd_ps(high ? _mm512_unpackhi_pd(xd, yd) : _mm512_unpacklo_pd(xd, yd));
    };
    r[g] = pairs(g, g + 2, false), r[g + 1] = pairs(g, g + 2, true);
    r[g + 2] = pairs(g + 1, g + 3, false), r[g + 3] = pairs(g + 1, g + 3, true);
  }
  for (size_t k = 0; k < 4; ++k) {  // column 4b+k = [r_k.b, r_4+k.b, r_8+k.b, r_12+k.b]
    const __m512 lo_0 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x44);      // blocks 0, 1
    const __m512 hi_0 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xEE);      // blocks 2, 3
    const __m512 lo_1 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x44);
    const __m512 hi_1 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xEE);
    store(dst + k * dst_ld, _mm512_shuffle_f32x4(lo_0, lo_1, 0x88));
    store(dst + (4 + k) * dst_ld, _mm512_shuffle_f32x4(lo_0, lo_1, 0xDD));
    store(dst + (8 + k) * dst_ld, _mm512_shuffle_f32x4(hi_0, hi_1, 0x88));
    store(dst + (12 + k) * dst_ld, _mm512_shuffle_f32x4(hi_0, hi_1, 0xDD));
  }
}
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
// 8 × 8: 8 row loads, three rounds of 8 shuffles, 8 column stores. Row r = [a_r,0 .. a_r,7] in
// two 128-bit halves (columns 0-3, 4-7).
constexpr size_t kTransposeBlock = 8;
// As the AVX-512 one: `rows` rows read, the first `lanes` entries of every column stored.
HWY_INLINE void TransposeBlockRows(const float* HWY_RESTRICT src, size_t ld, size_t rows,
                                   float* HWY_RESTRICT dst, size_t dst_ld, size_t lanes) {
  __m256 r[8], t[8];
  for (size_t i = 0; i < 8; ++i) r[i] = i < rows ? _mm256_loadu_ps(src + i * ld) : _mm256_setzero_ps();
  const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const auto store = [&](float* to, __m256 v) {  // a masked store only where it is needed
    if (lanes == 8) _mm256_storeu_ps(to, v);
    else _mm256_maskstore_ps(to, keep, v);
  };
  for (size_t i = 0; i < 8; i += 2) {  // t_i: half h = [a_i,4h a_i+1,4h a_i,4h+1 a_i+1,4h+1]
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);  // t_i+1: the same for columns 4h+2, 4h+3
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (size_t g = 0; g < 8; g += 4) {  // r_g+k: half h = column 4h+k, rows g .. g+3
    r[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44), r[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
    r[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    r[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  for (size_t k = 0; k < 4; ++k) {  // column 4h+k = [r_k.h, r_4+k.h]
    store(dst + k * dst_ld, _mm256_permute2f128_ps(r[k], r[4 + k], 0x20));
    store(dst + (4 + k) * dst_ld, _mm256_permute2f128_ps(r[k], r[4 + k], 0x31));
  }
}
#else
constexpr size_t kTransposeBlock = 0;
HWY_INLINE void TransposeBlockRows(const float*, size_t, size_t, float*, size_t, size_t) {}
#endif
// The whole block: every row read, every column stored whole.
HWY_INLINE void TransposeBlock(const float* HWY_RESTRICT src, size_t ld, float* HWY_RESTRICT dst,
                               size_t dst_ld) {
  TransposeBlockRows(src, ld, kTransposeBlock, dst, dst_ld, kTransposeBlock);
}

// dst[c · dst_ld + r] = src[r · ld + c] for r < rows, c < cols: the repacking of k, v (and the
// short path's q, do) into column-major operands. Whole blocks go through registers
// (TransposeBlock): element by element the strided stores (dst_ld floats apart) were the largest
// part of BackwardUnit's own time (perf, the large decoder's step).
HWY_INLINE void Transpose(const float* HWY_RESTRICT src, size_t ld, size_t rows, size_t cols,
                          float* HWY_RESTRICT dst, size_t dst_ld) {
  constexpr size_t B = kTransposeBlock;
  size_t r0 = 0;
  for (; B > 0 && r0 + B <= rows; r0 += B) {
    size_t c = 0;
    for (; c + B <= cols; c += B) TransposeBlock(src + r0 * ld + c, ld, dst + c * dst_ld + r0, dst_ld);
    for (; c < cols; ++c)
      for (size_t r = r0; r < r0 + B; ++r) dst[c * dst_ld + r] = src[r * ld + c];
  }
  for (size_t r = r0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) dst[c * dst_ld + r] = src[r * ld + c];
}

// A panel of `panel_rows` rows: the transpose of `rows` ≤ panel_rows rows, the rows past them zero:
//   dst[c · panel_rows + r] = r < rows ? src[r · ld + c] : 0      for r < panel_rows, c < cols
// (the packed GEMM's A sliver: rows of a row-major A become a [kc × R] panel). Blocks of columns
// go through registers where panel_rows fits one block (masked stores keep the columns apart).
HWY_INLINE void TransposeToPanel(const float* HWY_RESTRICT src, size_t ld, size_t rows, size_t cols,
                                 float* HWY_RESTRICT dst, size_t panel_rows) {
  constexpr size_t B = kTransposeBlock;
  size_t c = 0;
  if (B > 0 && panel_rows <= B)
    for (; c + B <= cols; c += B)
      TransposeBlockRows(src + c, ld, rows, dst + c * panel_rows, panel_rows, panel_rows);
  for (; c < cols; ++c)
    for (size_t r = 0; r < panel_rows; ++r) dst[c * panel_rows + r] = r < rows ? src[r * ld + c] : 0.0f;
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#endif  // SCALELAB_KERNELS_TRANSPOSE_BLOCK_INL_H_
