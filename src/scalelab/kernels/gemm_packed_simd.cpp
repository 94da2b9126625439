// scalelab's own f32 GEMM (contract and blocking: gemm_packed.hpp), for every Highway target.
//
// op(B) is packed into [kc × W] panels, so the micro-kernel's two vector loads per k are aligned
// and contiguous; an edge panel is padded with zeros. A row-major B under a C of at most 256 × 256
// is read in place instead (its panels at stride ldb), except its edge panel.
// op(A) is packed sliver by sliver into [kc × R] (a transpose through registers when A is
// row-major, a copy of R floats per k when it is stored transposed: the dW = dyᵀ · x products),
// except a row-major A whose C is at most 3 panels wide: then its R rows are broadcast in place (at
// stride lda), as the packing would cost more than it saves over so few panels.
#include <algorithm>
#include <cstddef>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/gemm_packed_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "scalelab/core/error.hpp"
#include "scalelab/kernels/gemm_packed.hpp"
#include "scalelab/kernels/micro_tile-inl.hpp"
#include "scalelab/kernels/transpose_block-inl.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#ifndef SCALELAB_GEMM_PACKED_CALL  // this file is compiled once per target: define the struct once
#define SCALELAB_GEMM_PACKED_CALL
namespace scalelab::gemm_packed_detail {
// Everything one call needs, strides resolved; the same for every target.
struct Call {
  size_t m, n, k;
  bool trans_a, trans_b;
  size_t lda, ldb, ldc;
  const float* a;
  const float* b;
  float* c;
  float alpha, beta;
  GemmEpilogue<float> epilogue;
};
}  // namespace scalelab::gemm_packed_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
using gemm_packed_detail::Call;
namespace {  // this file's helpers: other kernels' files share the per-target namespace

constexpr size_t kRows = kMicroRows;  // R (micro_tile-inl.hpp)
constexpr size_t kMaxDepth = 256;     // KC: an A sliver kc × R (12 KiB at R = 12) stays in L1
constexpr size_t kBlockCols = 1024;   // NC: B block kc × 1024 (1 MiB) stays in L2

// Where a micro-tile's sums go: for a full tile (R × W inside C) straight into C, row by row from
// the registers (Update below); for an edge tile into `edge_tile` (row stride W), which UpdateEdge adds
// to C element by element.
struct TileTarget {
  const Call* g;
  size_t i, j;        // the tile's first row (of the band) and column
  bool first, last;   // the first / last depth block
  float* edge_tile;   // null for a full tile
  size_t b_ld;        // the B panel's row stride: W when packed, ldb when read in place
};

// C[i + r, j + h .. + L) from the sums v of a tile row: the first depth block sets
// C = alpha·v + beta·C (C unread when beta = 0), later ones add alpha·v; the last one then applies
// the epilogue (bias, ReLU with NaN and -0 kept, the ReLU-gradient mask).
HWY_INLINE void Update(const TileTarget& t, size_t r, size_t h, hn::Vec<DF> v) {
  const DF d;
  const Call& g = *t.g;
  float* c = g.c + (t.i + r) * g.ldc + t.j + h;
  if (g.alpha != 1.0f) v = hn::Mul(v, hn::Set(d, g.alpha));
  if (!t.first) v = hn::Add(hn::LoadU(d, c), v);
  else if (g.beta != 0.0f) v = hn::MulAdd(hn::Set(d, g.beta), hn::LoadU(d, c), v);
  if (t.last) {
    const GemmEpilogue<float>& e = g.epilogue;
    const auto zero = hn::Zero(d);
    if (e.bias) v = hn::Add(v, hn::LoadU(d, e.bias + t.j + h));
    if (e.relu) v = hn::IfThenElse(hn::Lt(v, zero), zero, v);
    if (e.keep_where_positive) {
      const float* keep = e.keep_where_positive + (t.i + r) * g.n + t.j + h;
      v = hn::IfThenElse(hn::Gt(hn::LoadU(d, keep), zero), v, zero);
    }
  }
  hn::StoreU(v, d, c);
}

// The scalar Update for the rows × cols of an edge tile.
HWY_INLINE void UpdateEdge(const TileTarget& t, size_t rows, size_t cols) {
  const Call& g = *t.g;
  const GemmEpilogue<float>& e = g.epilogue;
  const size_t W = 2 * hn::Lanes(DF());
  for (size_t r = 0; r < rows; ++r) {
    float* crow = g.c + (t.i + r) * g.ldc + t.j;
    const float* keep = e.keep_where_positive ? e.keep_where_positive + (t.i + r) * g.n + t.j : nullptr;
    for (size_t c = 0; c < cols; ++c) {
      float v = t.edge_tile[r * W + c];
      if (g.alpha != 1.0f) v *= g.alpha;
      if (!t.first) v = crow[c] + v;
      else if (g.beta != 0.0f) v = g.beta * crow[c] + v;
      if (t.last) {
        if (e.bias) v += e.bias[t.j + c];
        if (e.relu && v < 0.0f) v = 0.0f;
        if (keep && !(keep[c] > 0.0f)) v = 0.0f;
      }
      crow[c] = v;
    }
  }
}

// The M × W tile sum_{p < kc} A(r, p) · Bp[p × W + c] to its target, with A(r, p) =
// a[r · a_row + p · a_col]: the A panel packed (a_row = 1, a_col = R) or read in place
// (a_row = lda, a_col = 1).
template <size_t M, bool kPackedA = false>
HWY_INLINE void MicroKernel(size_t kc, const float* HWY_RESTRICT a, size_t a_row_in, size_t a_col_in,
                            const float* HWY_RESTRICT bp, const TileTarget& target) {
  // A packed: the strides are constants, so every broadcast is one addressing mode off one pointer
  const size_t a_row = kPackedA ? 1 : a_row_in, a_col = kPackedA ? kRows : a_col_in;
  const DF d;
  const size_t L = hn::Lanes(d), W = 2 * L;
  MicroTileSums<M>(kc, a, a_row, a_col, bp, target.b_ld, [&](size_t m, auto sum_0, auto sum_1) {
    if (target.edge_tile) {
      hn::Store(sum_0, d, target.edge_tile + m * W);
      hn::Store(sum_1, d, target.edge_tile + m * W + L);
    } else {
      Update(target, m, 0, sum_0);
      Update(target, m, L, sum_1);
    }
  });
}

// MicroKernel<rows> for 1 <= rows <= M (the last rows of an A read in place).
template <size_t M>
HWY_INLINE void MicroKernelRows(size_t rows, size_t kc, const float* a, size_t a_row, size_t a_col,
                                const float* bp, const TileTarget& target) {
  if constexpr (M > 0) {
    if (rows == M) return MicroKernel<M>(kc, a, a_row, a_col, bp, target);
    MicroKernelRows<M - 1>(rows, kc, a, a_row, a_col, bp, target);
  }
}

// Packs op(B)[p0 : p0 + kc, j0 : j0 + nc] into panels of W columns: panel q holds columns
// j0 + qW .. as bp[q · kc · W + p · W + c]; columns past nc are zero.
void PackB(const Call& g, size_t p0, size_t kc, size_t j0, size_t nc, float* HWY_RESTRICT bp) {
  const size_t W = MicroTileWidth();
  for (size_t q = 0; q * W < nc; ++q) {
    float* panel = bp + q * kc * W;
    const size_t cols = std::min(W, nc - q * W), col0 = j0 + q * W;
    if (!g.trans_b) {  // B stored k × n: each panel row is a contiguous run
      for (size_t p = 0; p < kc; ++p) {
        const float* src = g.b + (p0 + p) * g.ldb + col0;
        float* dst = panel + p * W;
        std::memcpy(dst, src, cols * sizeof(float));
        std::fill(dst + cols, dst + W, 0.0f);
      }
    } else {  // B stored n × k: column c of the panel is a contiguous run of row col0 + c
      Transpose(g.b + col0 * g.ldb + p0, g.ldb, cols, kc, panel, W);
      for (size_t p = 0; cols < W && p < kc; ++p)  // the columns past nc
        std::fill(panel + p * W + cols, panel + (p + 1) * W, 0.0f);
    }
  }
}

// Packs op(A)[i : i + rows, p0 : p0 + kc] (rows ≤ R) into one panel [kc × R] (the A sliver the
// micro-kernel broadcasts from): ap[p · R + m] = op(A)[i + m, p0 + p]; rows past `rows` zero.
void PackASliver(const Call& g, size_t i, size_t rows, size_t p0, size_t kc, float* HWY_RESTRICT ap) {
  if (g.trans_a && rows == kRows) {  // A stored k × m: R consecutive floats per k, a fixed size
    for (size_t p = 0; p < kc; ++p)
      std::memcpy(ap + p * kRows, g.a + (p0 + p) * g.lda + i, sizeof(float) * kRows);
  } else if (g.trans_a) {
    for (size_t p = 0; p < kc; ++p) {
      const float* src = g.a + (p0 + p) * g.lda + i;
      float* dst = ap + p * kRows;
      std::memcpy(dst, src, rows * sizeof(float));
      std::fill(dst + rows, dst + kRows, 0.0f);
    }
  } else {  // A stored m × k: the transpose of `rows` rows of kc floats
    TransposeToPanel(g.a + i * g.lda + p0, g.lda, rows, kc, ap, kRows);
  }
}

// Splits n into ceil(n / most) nearly equal blocks; block b is [n·b/blocks, n·(b+1)/blocks),
// rounded to multiples of `unit` except the end.
struct Blocks {
  size_t n, count, unit;
  Blocks(size_t n_, size_t most, size_t unit_) : n(n_), count((n_ + most - 1) / most), unit(unit_) {}
  size_t begin(size_t b) const { return b == count ? n : std::min(n, (n * b / count + unit - 1) / unit * unit); }
  size_t end(size_t b) const { return begin(b + 1); }
};

HWY_NOINLINE void GemmPacked(const Call& g) {
  const size_t W = MicroTileWidth();
  thread_local hwy::AlignedFreeUniquePtr<float[]> b_block, a_sliver;
  thread_local size_t b_capacity = 0;
  const size_t b_need = kMaxDepth * std::min(kBlockCols, (g.n + W - 1) / W * W);
  if (b_need > b_capacity) b_block = hwy::AllocateAligned<float>(b_need), b_capacity = b_need;
  if (!a_sliver) a_sliver = hwy::AllocateAligned<float>(kMaxDepth * kRows);
  HWY_ALIGN float tile[kRows * 2 * HWY_MAX_BYTES / sizeof(float)];

  // A row-major is read in place when C has at most 3 panels' width: the sliver's packing then
  // costs more than its broadcasts save (the small model's N = 64 products).
  const bool pack_a = g.trans_a || g.n > 3 * W;
  // A row-major B under a small C (both sides ≤ 256: a narrow layer's dW = dyᵀ · x) is read in
  // place at stride ldb, all but its last, partial panel: over so few A slivers packing B costs
  // more than its contiguous panels save (64 × 1024 → 64: 97 against 134 GFLOP/s).
  const bool b_in_place = !g.trans_b && g.m <= 256 && g.n <= 256;
  const Blocks depth(g.k, kMaxDepth, 1), cols(g.n, kBlockCols, W);
  for (size_t jb = 0; jb < cols.count; ++jb) {
    const size_t j0 = cols.begin(jb), nc = cols.end(jb) - j0;
    for (size_t pb = 0; pb < depth.count; ++pb) {
      const size_t p0 = depth.begin(pb), kc = depth.end(pb) - p0;
      const bool first = pb == 0, last = pb + 1 == depth.count;
      if (!b_in_place) PackB(g, p0, kc, j0, nc, b_block.get());
      else if (nc % W) PackB(g, p0, kc, j0 + nc / W * W, nc % W, b_block.get() + nc / W * kc * W);
      for (size_t i = 0; i < g.m; i += kRows) {
        const size_t tile_rows = std::min(kRows, g.m - i);
        if (pack_a) PackASliver(g, i, tile_rows, p0, kc, a_sliver.get());
        for (size_t q = 0; q * W < nc; ++q) {
          const size_t tile_cols = std::min(W, nc - q * W);
          const bool edge = tile_rows < kRows || tile_cols < W;
          const bool b_here = b_in_place && tile_cols == W;
          const TileTarget target{&g, i, j0 + q * W, first, last, edge ? tile : nullptr,
                                  b_here ? g.ldb : W};
          const float* bp = b_here ? g.b + p0 * g.ldb + j0 + q * W : b_block.get() + q * kc * W;
          if (pack_a) {
            MicroKernel<kRows, true>(kc, a_sliver.get(), 1, kRows, bp, target);
          } else {
            const float* a = g.a + i * g.lda + p0;
            if (tile_rows == kRows) MicroKernel<kRows>(kc, a, g.lda, 1, bp, target);
            else MicroKernelRows<kRows - 1>(tile_rows, kc, a, g.lda, 1, bp, target);
          }
          if (edge) UpdateEdge(target, tile_rows, tile_cols);
        }
      }
    }
  }
}

}  // namespace

// The micro-kernel alone, `rounds` times over one depth block of packed panels that stay in L1
// (A [KC × R], B [KC × W]): what the loop nest above could reach if packing, C's updates and cache
// misses cost nothing. Returns the flops done (2·R·W·KC a round).
HWY_NOINLINE double MicroTileRun(int64_t rounds) {
  const DF d;
  const size_t W = MicroTileWidth();
  thread_local hwy::AlignedFreeUniquePtr<float[]> a, b;
  if (!a) {
    a = hwy::AllocateAligned<float>(kMaxDepth * kRows), b = hwy::AllocateAligned<float>(kMaxDepth * W);
    for (size_t i = 0; i < kMaxDepth * kRows; ++i) a[i] = 1e-3f * float(i % 7);
    for (size_t i = 0; i < kMaxDepth * W; ++i) b[i] = 1e-3f * float(i % 5);
  }
  auto sink = hn::Zero(d);  // every sum feeds it, so none is optimised away
  for (int64_t r = 0; r < rounds; ++r)
    MicroTileSums<kRows>(kMaxDepth, a.get(), 1, kRows, b.get(), W,
                         [&](size_t, auto sum_0, auto sum_1) { sink = hn::Add(sink, hn::Add(sum_0, sum_1)); });
  volatile float kept = hn::GetLane(sink);
  (void)kept;
  return 2.0 * double(kRows) * double(W) * double(kMaxDepth) * double(rounds);
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {

HWY_EXPORT(GemmPacked);
HWY_EXPORT(MicroTileRun);

double gemm_packed_micro_tile_run(int64_t rounds) {
  apply_simd_environment();
  return HWY_DYNAMIC_DISPATCH(MicroTileRun)(rounds);
}

void gemm_packed_f32(const GemmShape& s, const float* a, const float* b, float* c, float alpha,
                     float beta, const GemmEpilogue<float>& epilogue) {
  SL_CHECK(s.m > 0 && s.n > 0 && s.k > 0 && s.lda > 0 && s.ldb > 0 && s.ldc > 0,
           "gemm_packed_f32: sizes and strides must be positive, got m=", s.m, " n=", s.n, " k=",
           s.k, " lda=", s.lda, " ldb=", s.ldb, " ldc=", s.ldc);
  apply_simd_environment();
  const gemm_packed_detail::Call call{static_cast<size_t>(s.m), static_cast<size_t>(s.n),
                                      static_cast<size_t>(s.k), s.trans_a, s.trans_b,
                                      static_cast<size_t>(s.lda), static_cast<size_t>(s.ldb),
                                      static_cast<size_t>(s.ldc), a, b, c, alpha, beta, epilogue};
  HWY_DYNAMIC_DISPATCH(GemmPacked)(call);
}

}  // namespace scalelab
#endif  // HWY_ONCE
