// The float flash-attention kernel: tiles of Br query rows × Bc keys, register-blocked matrix
// products (12 or 6 rows × 2 vectors of C per micro-tile, as BLIS does) and vectorised online
// softmax, compiled for every Highway target and chosen at run time (HWY_DYNAMIC_DISPATCH).
// Math: attention_flash.hpp. Plain twin: flash_forward_plain / flash_backward_plain.
//
// Per (batch, head) the inputs are repacked: Kt = kᵀ [d × Nk'] and Vt = vᵀ (B operands of q·kᵀ
// and do·vᵀ). The row-major operands (q, k, v, do) are read in place where d is a whole number of
// vectors, else from copies padded to Dp columns (Dp = d rounded up to a whole vector).
// Workspace per thread is O((q_len + k_len) · d): no N×N buffer exists. Short key sequences take
// the path of attention_short-inl.hpp (query rows in the vector lanes) from ForwardUnit and
// BackwardUnit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/attention_flash_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "scalelab/kernels/micro_tile-inl.hpp"
#include "scalelab/kernels/transpose_block-inl.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/core/tensor.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/kernels/attention_flash_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;

constexpr size_t kTileRows = 48;  // Br: query rows per tile (a multiple of the 6-row micro-tile)

HWY_INLINE size_t PanelWidth() { return MicroTileWidth(); }  // W: columns of one micro-tile
size_t TileCols() { return std::max<size_t>(128, PanelWidth()); }  // Bc: keys per tile
size_t RoundUp(size_t n, size_t m) { return (n + m - 1) / m * m; }

// C[M × W] (= or +=) sum_k A(m, k) B[k, 0:W] with A(m, k) = A[m·a_row + k·a_col]; W = 2 vectors.
template <size_t M>
HWY_INLINE void MicroTile(size_t K, const float* HWY_RESTRICT A, size_t a_row, size_t a_col,
                          const float* HWY_RESTRICT B, size_t ldb, float* HWY_RESTRICT C,
                          size_t ldc, bool accumulate) {
  const DF d;
  const size_t L = hn::Lanes(d);
  MicroTileSums<M>(K, A, a_row, a_col, B, ldb, [&](size_t m, auto sum_0, auto sum_1) {
    float* c = C + m * ldc;
    if (accumulate) {
      sum_0 = hn::Add(sum_0, hn::LoadU(d, c));
      sum_1 = hn::Add(sum_1, hn::LoadU(d, c + L));
    }
    hn::StoreU(sum_0, d, c);
    hn::StoreU(sum_1, d, c + L);
  });
}

// The one-vector-wide twin of MicroTile (the last L columns of a product whose width is an odd
// number of vectors).
template <size_t M>
HWY_INLINE void MicroTile1(size_t K, const float* HWY_RESTRICT A, size_t a_row, size_t a_col,
                           const float* HWY_RESTRICT B, size_t ldb, float* HWY_RESTRICT C,
                           size_t ldc, bool accumulate) {
  const DF d;
  MicroTileSums1<M>(K, A, a_row, a_col, B, ldb, [&](size_t m, auto sum) {
    float* c = C + m * ldc;
    if (accumulate) sum = hn::Add(sum, hn::LoadU(d, c));
    hn::StoreU(sum, d, c);
  });
}

// M rows of a micro-tile (M < kMicroRows two vectors wide, kWide; M < kMicroRows1 one wide).
template <size_t M, bool kWide>
HWY_INLINE void MicroTileRemainder(size_t rows, size_t K, const float* A, size_t a_row,
                                   size_t a_col, const float* B, size_t ldb, float* C, size_t ldc,
                                   bool accumulate) {
  if constexpr (M > 0) {
    if (rows == M) {
      if constexpr (kWide) return MicroTile<M>(K, A, a_row, a_col, B, ldb, C, ldc, accumulate);
      else return MicroTile1<M>(K, A, a_row, a_col, B, ldb, C, ldc, accumulate);
    }
    MicroTileRemainder<M - 1, kWide>(rows, K, A, a_row, a_col, B, ldb, C, ldc, accumulate);
  }
}

// C[M × N] (= or +=) A(M × K) · B[K × N]; N a multiple of L (whole vectors); A(m, k) = A[m·a_row +
// k·a_col]. Two vectors of columns at a time, then the last vector alone when N is an odd number
// of them. The reference of this product is the plain triple loop of flash_*_plain.
HWY_NOINLINE void Gemm(size_t M, size_t N, size_t K, const float* A, size_t a_row, size_t a_col,
                       const float* B, size_t ldb, float* C, size_t ldc, bool accumulate) {
  const size_t W = PanelWidth();
  size_t n = 0;
  for (; n + W <= N; n += W) {
    size_t m = 0;
    for (; m + kMicroRows <= M; m += kMicroRows)
      MicroTile<kMicroRows>(K, A + m * a_row, a_row, a_col, B + n, ldb, C + m * ldc + n, ldc,
                            accumulate);
    if (m < M)
      MicroTileRemainder<kMicroRows - 1, true>(M - m, K, A + m * a_row, a_row, a_col, B + n, ldb,
                                               C + m * ldc + n, ldc, accumulate);
  }
  if (n < N) {  // one vector of columns left
    size_t m = 0;
    for (; m + kMicroRows1 <= M; m += kMicroRows1)
      MicroTile1<kMicroRows1>(K, A + m * a_row, a_row, a_col, B + n, ldb, C + m * ldc + n, ldc,
                              accumulate);
    if (m < M)
      MicroTileRemainder<kMicroRows1 - 1, false>(M - m, K, A + m * a_row, a_row, a_col, B + n, ldb,
                                                C + m * ldc + n, ldc, accumulate);
  }
}

// dst[0 : n] = mul · src[0 : n]: a row of one head (a few vectors), copied inline; a libc memcpy
// call per row cost 4 % of the small model's step (16-dimensional heads, 16 tokens).
HWY_INLINE void CopyRow(float* HWY_RESTRICT dst, const float* HWY_RESTRICT src, size_t n,
                        float mul = 1.0f) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const auto v_mul = hn::Set(d, mul);
  size_t e = 0;
  for (; e + L <= n; e += L) hn::StoreU(hn::Mul(v_mul, hn::LoadU(d, src + e)), d, dst + e);
  for (; e < n; ++e) dst[e] = mul * src[e];
}

// sum_e x_e y_e over e < n, the products and sum in double (vectorised: a lane of doubles per
// pair of floats; the sum's order differs from a scalar loop's by double rounding only).
HWY_INLINE double DotInDouble(const float* x, const float* y, size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> dh;  // as many floats as dd has doubles
  const size_t Ld = hn::Lanes(dd);
  auto acc = hn::Zero(dd);
  size_t e = 0;
  for (; e + Ld <= n; e += Ld)
    acc = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(dh, x + e)), hn::PromoteTo(dd, hn::LoadU(dh, y + e)),
                     acc);
  double sum = hn::GetLane(hn::SumOfLanes(dd, acc));
  for (; e < n; ++e) sum += double(x[e]) * y[e];
  return sum;
}

#include "scalelab/kernels/attention_short-inl.hpp"  // the short-key path (uses the above)

// Loads L values of a row of length n starting at j; lanes past n read as 0.
HWY_INLINE hn::Vec<DF> LoadTail(const float* row, size_t j, size_t n) {
  const DF d;
  const size_t L = hn::Lanes(d);
  if (j + L <= n) return hn::LoadU(d, row + j);
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
  for (size_t e = 0; j + e < n; ++e) buf[e] = row[j + e];
  return hn::Load(d, buf);
}

// The SIMD twin of AttentionLogit::operator() (attention_logit.hpp), for row i of a tile:
// s = scale·raw; soft-cap; + bias; - slope·|i' - j|; columns [0, cols) start at key j0, and those
// at column >= limit (masked keys) get -inf. row holds raw on entry, s on exit.
HWY_INLINE void LogitRow(const AttentionLogit<float>& p, int64_t i, int64_t j0, size_t cols,
                         size_t limit, float* row, hn::Vec<DF>& vmax) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const auto v_scale = hn::Set(d, p.scale), v_limit = hn::Set(d, static_cast<float>(limit));
  const auto v_cap = hn::Set(d, p.cap), v_inv_cap = hn::Set(d, p.cap > 0 ? 1.0f / p.cap : 0.0f);
  const auto v_ii = hn::Set(d, static_cast<float>(i + p.k_len - p.q_len));
  const auto v_slope = hn::Set(d, p.slope), neg_inf = hn::Set(d, -HUGE_VALF);
  const float* bias_row = p.bias ? p.bias + i * p.k_len : nullptr;
  for (size_t c = 0; c < cols; c += L) {
    auto x = hn::Mul(hn::LoadU(d, row + c), v_scale);
    if (p.cap > 0) x = hn::Mul(v_cap, hn::Tanh(d, hn::Mul(x, v_inv_cap)));
    if (bias_row) x = hn::Add(x, LoadTail(bias_row, j0 + c, p.k_len));
    if (p.slope != 0.0f) {
      const auto j = hn::Iota(d, static_cast<float>(j0 + c));
      x = hn::NegMulAdd(v_slope, hn::Abs(hn::Sub(v_ii, j)), x);
    }
    x = hn::IfThenElse(hn::Lt(hn::Iota(d, static_cast<float>(c)), v_limit), x, neg_inf);
    hn::StoreU(x, d, row + c);
    vmax = hn::Max(vmax, x);
  }
}

// max_c x_c over columns [0, limit) (-inf if limit = 0).
HWY_INLINE float RowMax(const float* row, size_t limit) {
  const DF d;
  const size_t L = hn::Lanes(d), full = limit / L * L;
  const auto neg_inf = hn::Set(d, -HUGE_VALF);
  auto vmax = neg_inf;
  for (size_t c = 0; c < full; c += L) vmax = hn::Max(vmax, hn::LoadU(d, row + c));
  if (full < limit)
    vmax = hn::Max(vmax, hn::IfThenElse(hn::FirstN(d, limit - full), hn::LoadU(d, row + full), neg_inf));
  return hn::GetLane(hn::MaxOfLanes(d, vmax));
}

// In place: row_c = e^t_c with t_c = max(row_c·mul - shift, -200) for c < limit, and 0 for
// limit <= c < cols (masked keys). Returns sum_c row_c; adds sum_c row_c·t_c to *weighted.
HWY_INLINE float ExpRow(float* row, size_t cols, size_t limit, float mul, float shift,
                        float* weighted) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const auto v_mul = hn::Set(d, mul), v_shift = hn::Set(d, shift), floor = hn::Set(d, -200.0f);
  auto vsum = hn::Zero(d), vweighted = hn::Zero(d);
  size_t c = 0;
  for (; c < limit; c += L) {
    const auto t = hn::Max(hn::MulSub(hn::LoadU(d, row + c), v_mul, v_shift), floor);
    auto p = hn::Exp(d, t);
    if (c + L > limit) p = hn::IfThenElseZero(hn::FirstN(d, limit - c), p);
    vsum = hn::Add(vsum, p);
    if (weighted) vweighted = hn::MulAdd(p, t, vweighted);
    hn::StoreU(p, d, row + c);
  }
  for (; c < cols; c += L) hn::StoreU(hn::Zero(d), d, row + c);
  if (weighted) *weighted += hn::GetLane(hn::SumOfLanes(d, vweighted));
  return hn::GetLane(hn::SumOfLanes(d, vsum));
}

// Whether the logit is just scale · raw (no soft-cap, bias or ALiBi) with scale > 0, so that the
// row max and the exponent come straight from raw (one pass less).
HWY_INLINE bool PlainLogits(const AttentionLogit<float>& p) {
  return p.cap <= 0 && !p.bias && p.slope == 0.0f && p.scale > 0;
}

// Floats of per-thread workspace for one unit (forward or backward).
size_t WorkspaceFloats(const AttentionShape& s, bool backward) {
  const size_t L = hn::Lanes(DF()), Bc = TileCols(), Br = kTileRows;
  const size_t D = s.head_dim, Dp = RoundUp(D, L), Nq = s.q_len, Nk = RoundUp(s.k_len, Bc);
  const size_t tiles = 3 * Br * Bc + 4 * Br + 2 * Bc * Dp + Br * Dp + Nq;
  const size_t rows_path =
      backward ? 2 * D * Nk + Nk * Dp + 3 * Nq * Dp + tiles : D * Nk + Nk * Dp + tiles;
  return std::max(rows_path, ShortWorkspaceFloats(s));
}

// Forward of one (batch, head), query rows [q_begin, q_end) (q_begin a multiple of Br, so the
// tiles, and every value, are those of the whole head): o and lse (attention_flash.hpp, online
// softmax).
void ForwardUnit(const detail::FlashArgs& a, int64_t b, int64_t h, int64_t q_begin, int64_t q_end,
                 float* ws, detail::ProbePartial* probe) {
  if (ShortPathApplies(a.shape, *a.opt, probe != nullptr))
    return ShortForwardUnit(a, b, h, q_begin, q_end, ws);
  const DF d;
  const size_t L = hn::Lanes(d), Bc = TileCols(), Br = kTileRows;
  const AttentionShape& s = a.shape;
  const size_t D = s.head_dim, Dp = RoundUp(D, L), Nk = RoundUp(s.k_len, Bc);
  const AttentionLogit<float> lp(a.shape, *a.opt, h);
  const bool plain = PlainLogits(lp);
  // Workspace: Kt [Nk / Bc tiles of D × Bc], Vp [Nk × Dp] (where v's rows need padding),
  // S [Br × Bc], O [Br × Dp], m, l, A [Br].
  float* Kt = ws;
  float* Vp = Kt + D * Nk;
  float* S = Vp + Nk * Dp;
  float* O = S + Br * Bc;
  float *m = O + Br * Dp, *l = m + Br, *A = l + Br;
  // No clearing here: the caller zeroes the workspace once per call, every unit of the call has
  // the same shape and so writes the same positions, and the padding it reads (tile tails, the
  // columns past D) is never written. Only the accumulators (O below) are cleared per unit.
  // q is read in place (the A operand of q·kᵀ, any row stride); v too where its rows fill whole
  // vectors (D = Dp), else from the padded copy Vp.
  const float* q_rows = a.q + b * s.q_len * a.strides.q + h * D;
  const bool v_in_place = D == Dp;
  const float* v_rows = v_in_place ? a.v + b * s.k_len * a.strides.v + h * D : Vp;
  const size_t v_ld = v_in_place ? a.strides.v : Dp;
  const float* k_rows = a.k + b * s.k_len * a.strides.k + h * D;
  for (size_t j0 = 0; j0 < size_t(s.k_len); j0 += Bc)  // Kt tile j0 / Bc = k[j0 : j0 + Bc]ᵀ
    Transpose(k_rows + j0 * a.strides.k, a.strides.k, std::min<size_t>(Bc, s.k_len - j0), D,
              Kt + j0 * D, Bc);
  for (int64_t j = 0; !v_in_place && j < s.k_len; ++j)
    CopyRow(Vp + j * Dp, a.v + (b * s.k_len + j) * a.strides.v + h * D, D);
  size_t limit[kTileRows];
  for (int64_t i0 = q_begin; i0 < q_end; i0 += Br) {
    const size_t rows = std::min<size_t>(Br, q_end - i0);
    std::memset(O, 0, rows * Dp * sizeof(float));
    size_t key_end = 0;
    for (size_t r = 0; r < rows; ++r) {
      m[r] = -HUGE_VALF;
      l[r] = 0.0f, A[r] = 0.0f;
      key_end = std::max<size_t>(key_end, attention_visible_keys(s, *a.opt, b, i0 + r));
    }
    for (size_t j0 = 0; j0 < key_end; j0 += Bc) {
      const size_t kmax = std::min(Bc, key_end - j0);  // columns any row of the tile can see
      const size_t cols = RoundUp(kmax, L);
      // S = q_tile · Kt[:, j0:j0+cols]
      Gemm(rows, cols, D, q_rows + i0 * a.strides.q, a.strides.q, 1, Kt + j0 * D, Bc, S, Bc, false);
      for (size_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r;
        const int64_t visible = attention_visible_keys(s, *a.opt, b, i);
        limit[r] = static_cast<size_t>(std::clamp<int64_t>(visible - int64_t(j0), 0, kmax));
        float* row = S + r * Bc;
        float tile_max;
        if (plain) {
          tile_max = limit[r] ? lp.scale * RowMax(row, limit[r]) : -HUGE_VALF;
        } else {
          auto vmax = hn::Set(d, -HUGE_VALF);
          LogitRow(lp, i, j0, cols, limit[r], row, vmax);
          tile_max = hn::GetLane(hn::MaxOfLanes(d, vmax));
        }
        // m' = max(m, max_j s_j); alpha = e^(m - m')
        const float m_new = std::max(m[r], tile_max);
        const float m_use = m_new == -HUGE_VALF ? 0.0f : m_new;
        const float alpha = l[r] > 0 ? std::exp(m[r] - m_use) : 0.0f;
        // p_j = e^(s_j - m'), l = alpha l + sum_j p_j (and A for the entropy probe)
        float weighted = 0.0f;
        const float sum = ExpRow(row, cols, limit[r], plain ? lp.scale : 1.0f, m_use,
                                 probe ? &weighted : nullptr);
        if (probe) {  // A' = alpha (A + (m - m') l) + sum_j p_j (s_j - m')
          A[r] = (l[r] > 0 ? alpha * (A[r] + (m[r] - m_use) * l[r]) : 0.0f) + weighted;
        }
        l[r] = alpha * l[r] + sum;
        m[r] = m_new;
        if (alpha != 1.0f) {  // acc = alpha acc
          const auto v_alpha = hn::Set(d, alpha);
          for (size_t e = 0; e < Dp; e += L)
            hn::StoreU(hn::Mul(v_alpha, hn::LoadU(d, O + r * Dp + e)), d, O + r * Dp + e);
        }
      }
      // acc += p · v[j0:j0+kmax]
      Gemm(rows, Dp, kmax, S, Bc, 1, v_rows + j0 * v_ld, v_ld, O, Dp, true);
    }
    // lse = m + log l (-inf for a row with no visible key), a vector of rows at a time
    float* lse = a.lse + (b * s.heads + h) * s.q_len + i0;
    size_t r = 0;
    for (; r + L <= rows; r += L) {
      const auto vl = hn::LoadU(d, l + r);
      hn::StoreU(hn::IfThenElse(hn::Gt(vl, hn::Zero(d)), hn::Add(hn::LoadU(d, m + r), hn::Log(d, vl)),
                                hn::Set(d, -HUGE_VALF)),
                 d, lse + r);
    }
    for (; r < rows; ++r) lse[r] = l[r] > 0 ? m[r] + std::log(l[r]) : -HUGE_VALF;
    // o = acc / l
    for (r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      const float inv = l[r] > 0 ? 1.0f / l[r] : 0.0f;
      float* oi = a.out_mut + (b * s.q_len + i) * a.strides.o + h * D;
      CopyRow(oi, O + r * Dp, D, inv);
      if (probe && l[r] > 0) {  // H = log l - A / l; max p = 1 / l
        probe->add_row(*a.probe_cfg, std::log(double(l[r])) - double(A[r]) / double(l[r]),
                       1.0 / double(l[r]), attention_visible_keys(s, *a.opt, b, i));
      }
    }
  }
}

// Backward of one (batch, head), keys [k_begin, k_end) (k_begin a multiple of Bc), FlashAttention-2
// order (key tiles outer). Returns the partial sum of dhead_scales; writes dk, dv of those keys,
// adds into a.dbias, and writes these keys' share of dq: into a.dq when the unit covers every key,
// else into dq_part [q_len × D] (the caller sums the shares).
double BackwardUnit(const detail::FlashArgs& a, int64_t b, int64_t h, int64_t k_begin,
                    int64_t k_end, float* ws, float* dq_part) {
  if (k_begin == 0 && k_end == a.shape.k_len && !dq_part &&
      ShortPathApplies(a.shape, *a.opt, false))
    return ShortBackwardUnit(a, b, h, ws);
  const DF d;
  const size_t L = hn::Lanes(d), Bc = TileCols(), Br = kTileRows;
  const AttentionShape& s = a.shape;
  const AttentionOptions<float>& opt = *a.opt;
  const size_t D = s.head_dim, Dp = RoundUp(D, L), Nq = s.q_len, Nk = RoundUp(s.k_len, Bc);
  const AttentionLogit<float> lp(a.shape, *a.opt, h);
  const bool plain = PlainLogits(lp);
  const bool need_raw = opt.softcap > 0 || opt.head_scales;
  // Workspace: Kt, Vt [Nk / Bc tiles of D × Bc], Kp [Nk × Dp], Qp, dOp, dQ [Nq × Dp], P, dS, R [Br × Bc],
  // dK, dV [Bc × Dp], delta [Nq].
  float* Kt = ws;
  float* Vt = Kt + D * Nk;
  float* Kp = Vt + D * Nk;
  float* Qp = Kp + Nk * Dp;
  float* dOp = Qp + Nq * Dp;
  float* dQ = dOp + Nq * Dp;
  float* P = dQ + Nq * Dp;
  float* dS = P + Br * Bc;
  float* R = dS + Br * Bc;
  float* dK = R + Br * Bc;
  float* dV = dK + Bc * Dp;
  float* delta = dV + Bc * Dp;
  // Padding stays zero from the caller's clearing (see ForwardUnit); the dQ accumulator is
  // cleared per unit.
  std::memset(dQ, 0, Nq * Dp * sizeof(float));
  // k, q and do are read in place where their rows fill whole vectors (D = Dp: the B operands of
  // the products below load whole vectors), else from the padded copies Kp, Qp, dOp.
  const bool in_place = D == Dp;
  const float* k_rows = in_place ? a.k + b * s.k_len * a.strides.k + h * D : Kp;
  const float* q_rows = in_place ? a.q + b * s.q_len * a.strides.q + h * D : Qp;
  const float* do_rows = in_place ? a.dout + b * s.q_len * a.strides.o + h * D : dOp;
  const size_t k_ld = in_place ? a.strides.k : Dp, q_ld = in_place ? a.strides.q : Dp;
  const size_t do_ld = in_place ? a.strides.o : Dp;
  for (size_t j0 = k_begin; j0 < size_t(k_end); j0 += Bc) {  // tile j0 / Bc of Kt, Vt
    const size_t kb = std::min<size_t>(Bc, k_end - j0);
    Transpose(a.k + (b * s.k_len + j0) * a.strides.k + h * D, a.strides.k, kb, D, Kt + j0 * D, Bc);
    Transpose(a.v + (b * s.k_len + j0) * a.strides.v + h * D, a.strides.v, kb, D, Vt + j0 * D, Bc);
  }
  for (int64_t j = k_begin; !in_place && j < k_end; ++j)
    CopyRow(Kp + j * Dp, a.k + (b * s.k_len + j) * a.strides.k + h * D, D);
  for (size_t i = 0; i < Nq; ++i) {  // D_i = do_i · o_i
    const float* oi = a.out + (b * s.q_len + i) * a.strides.o + h * D;
    const float* doi = a.dout + (b * s.q_len + i) * a.strides.o + h * D;
    if (!in_place) {
      CopyRow(Qp + i * Dp, a.q + (b * s.q_len + i) * a.strides.q + h * D, D);
      CopyRow(dOp + i * Dp, doi, D);
    }
    delta[i] = static_cast<float>(DotInDouble(doi, oi, D));
  }
  const float* lse = a.lse + (b * s.heads + h) * s.q_len;
  const float scale = lp.scale, cap = lp.cap;
  double dscale = 0;
  size_t limit[kTileRows];
  for (size_t j0 = k_begin; j0 < size_t(k_end); j0 += Bc) {
    const size_t kb = std::min<size_t>(Bc, k_end - j0);
    std::memset(dK, 0, kb * Dp * sizeof(float));  // the dK and dV accumulators of this tile
    std::memset(dV, 0, kb * Dp * sizeof(float));
    for (size_t i0 = 0; i0 < Nq; i0 += Br) {
      const size_t rows = std::min(Br, Nq - i0);
      size_t kmax = 0;
      for (size_t r = 0; r < rows; ++r) {
        const int64_t visible = attention_visible_keys(s, opt, b, i0 + r);
        limit[r] = lse[i0 + r] == -HUGE_VALF
                       ? 0
                       : static_cast<size_t>(std::clamp<int64_t>(visible - int64_t(j0), 0, kb));
        kmax = std::max(kmax, limit[r]);
      }
      if (kmax == 0) continue;
      const size_t cols = RoundUp(kmax, L);
      // S = q_tile · Kt[:, j0:]  (forward: s_ij before masking), then p_ij = e^(s_ij - lse_i)
      Gemm(rows, cols, D, q_rows + i0 * q_ld, q_ld, 1, Kt + j0 * D, Bc, P, Bc, false);
      if (need_raw) std::memcpy(R, P, rows * Bc * sizeof(float));
      for (size_t r = 0; r < rows; ++r) {
        float* row = P + r * Bc;
        if (!plain) {
          auto unused = hn::Zero(d);
          LogitRow(lp, i0 + r, j0, cols, limit[r], row, unused);
        }
        ExpRow(row, cols, limit[r], plain ? scale : 1.0f, lse[i0 + r], nullptr);
      }
      // dv_j += sum_i p_ij do_i   (from o_i = sum_j p_ij v_j)
      Gemm(kmax, Dp, rows, P, 1, Bc, do_rows + i0 * do_ld, do_ld, dV, Dp, true);
      // dp = do_tile · Vt[:, j0:]
      Gemm(rows, cols, D, do_rows + i0 * do_ld, do_ld, 1, Vt + j0 * D, Bc, dS, Bc, false);
      for (size_t r = 0; r < rows; ++r) {
        // ds = p (dp - D_i)   (from p_i = softmax(s_i))
        const float* p_row = P + r * Bc;
        float* ds_row = dS + r * Bc;
        const auto v_delta = hn::Set(d, delta[i0 + r]);
        for (size_t c = 0; c < cols; c += L) {
          const auto p = hn::LoadU(d, p_row + c);
          hn::StoreU(hn::Mul(p, hn::Sub(hn::LoadU(d, ds_row + c), v_delta)), d, ds_row + c);
        }
        if (a.dbias) {  // from s += bias
          float* db = a.dbias + (h * s.q_len + i0 + r) * s.k_len + j0;
          for (size_t c = 0; c < limit[r]; ++c) db[c] += ds_row[c];
        }
        const float* raw = R + r * Bc;
        if (cap > 0) {  // from s = cap tanh(x / cap): ds_x = ds (1 - t²), t = tanh(scale raw / cap)
          const auto v_k = hn::Set(d, scale / cap), one = hn::Set(d, 1.0f);
          for (size_t c = 0; c < cols; c += L) {
            const auto t = hn::Tanh(d, hn::Mul(v_k, hn::LoadU(d, raw + c)));
            hn::StoreU(hn::Mul(hn::LoadU(d, ds_row + c), hn::NegMulAdd(t, t, one)), d,
                       ds_row + c);
          }
        }
        const auto v_scale = hn::Set(d, scale);
        auto vdscale = hn::Zero(d);
        for (size_t c = 0; c < cols; c += L) {  // from x = scale · raw
          const auto g = hn::LoadU(d, ds_row + c);
          if (need_raw) vdscale = hn::MulAdd(g, hn::LoadU(d, raw + c), vdscale);
          hn::StoreU(hn::Mul(g, v_scale), d, ds_row + c);
        }
        if (opt.head_scales) dscale += hn::GetLane(hn::SumOfLanes(d, vdscale));
      }
      // dq_i += scale sum_j ds_ij k_j;  dk_j += scale sum_i ds_ij q_i
      Gemm(rows, Dp, kmax, dS, Bc, 1, k_rows + j0 * k_ld, k_ld, dQ + i0 * Dp, Dp, true);
      Gemm(kmax, Dp, rows, dS, 1, Bc, q_rows + i0 * q_ld, q_ld, dK, Dp, true);
    }
    for (size_t c = 0; c < kb; ++c) {
      const int64_t j = j0 + c;
      CopyRow(a.dk + (b * s.k_len + j) * a.strides.k + h * D, dK + c * Dp, D);
      CopyRow(a.dv + (b * s.k_len + j) * a.strides.v + h * D, dV + c * Dp, D);
    }
  }
  for (size_t i = 0; i < Nq; ++i) {
    float* dst = dq_part ? dq_part + i * D : a.dq + (b * s.q_len + i) * a.strides.q + h * D;
    CopyRow(dst, dQ + i * Dp, D);
  }
  return dscale;
}

// Row of n logits from n raw dot products in place (the test of the SIMD twin): pads the row to
// whole vectors, as the kernel's tiles are.
void LogitRowOf(const AttentionLogit<float>& p, int64_t i, int64_t j0, size_t n, size_t limit,
                float* row) {
  const size_t cols = RoundUp(std::max<size_t>(n, 1), hn::Lanes(DF()));
  std::vector<float> padded(cols, 0.0f);
  std::copy(row, row + n, padded.begin());
  auto unused = hn::Zero(DF());
  LogitRow(p, i, j0, cols, limit, padded.data(), unused);
  std::copy(padded.begin(), padded.begin() + n, row);
}

// Kernel-level entry points (one call per unit; the OpenMP loop lives outside the target code).
bool FlashShortPathApplies(const AttentionShape& s, const AttentionOptions<float>& opt,
                           bool probes) {
  return ShortPathApplies(s, opt, probes);
}
size_t FlashWorkspaceFloats(const AttentionShape& s, bool backward) {
  return WorkspaceFloats(s, backward);
}
size_t FlashQueryTileRows() { return kTileRows; }
size_t FlashKeyTileCols() { return TileCols(); }
void FlashForwardUnit(const detail::FlashArgs& a, int64_t b, int64_t h, int64_t q_begin,
                      int64_t q_end, float* ws, detail::ProbePartial* probe) {
  ForwardUnit(a, b, h, q_begin, q_end, ws, probe);
}
double FlashBackwardUnit(const detail::FlashArgs& a, int64_t b, int64_t h, int64_t k_begin,
                         int64_t k_end, float* ws, float* dq_part) {
  return BackwardUnit(a, b, h, k_begin, k_end, ws, dq_part);
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

namespace scalelab {
HWY_EXPORT(FlashWorkspaceFloats);
HWY_EXPORT(FlashQueryTileRows);
HWY_EXPORT(FlashKeyTileCols);
HWY_EXPORT(FlashForwardUnit);
HWY_EXPORT(FlashBackwardUnit);
HWY_EXPORT(LogitRowOf);
HWY_EXPORT(FlashShortPathApplies);

namespace detail {

// Work is shared out in units handed to threads dynamically: a (batch, head), and when there are
// few of those (batch · heads < the targets below) also a range of query rows (forward) or of keys
// (backward), so that two threads are busy even on one head. A unit's results do not depend on
// which thread computes it, and the split depends on the shape only (never on the thread count),
// so results are deterministic and the same at any number of threads.
//   forward:  query ranges are whole Br-row tiles, so every value is the unsplit one;
//   backward: key ranges are whole Bc-key tiles; each range writes its keys' dk, dv and its share
//             of dq, and the shares are summed in range order afterwards.
constexpr int64_t kForwardUnitsWanted = 8;   // query ranges cost no memory
constexpr int64_t kBackwardUnitsWanted = 4;  // each key range holds a [q_len × d] dq share

// Ranges of `len` items in whole tiles of `tile`: about `wanted` / heads_total of them (>= 1).
int64_t split_count(int64_t heads_total, int64_t wanted, int64_t len, int64_t tile) {
  const int64_t tiles = (len + tile - 1) / tile;
  const int64_t want = (wanted + heads_total - 1) / heads_total;
  return std::clamp<int64_t>(want, 1, std::max<int64_t>(1, tiles));
}
// [begin, end) of range r of `count` over `len` items, in whole tiles.
std::pair<int64_t, int64_t> split_range(int64_t r, int64_t count, int64_t len, int64_t tile) {
  const int64_t tiles = (len + tile - 1) / tile;
  const int64_t begin = std::min(len, tiles * r / count * tile);
  const int64_t end = std::min(len, tiles * (r + 1) / count * tile);
  return {begin, end};
}

// Units handed out per fetch of the dynamic schedule: about 8 fetches per thread. One unit per
// fetch cost an atomic (and a store-buffer drain) per unit: 2.5 % of the small model's step on one
// thread, where 256 (batch, head) units of 16 tokens each take ~1 µs (perf, 1 thread). Which
// thread runs a unit never changes its result (units write disjoint outputs).
int64_t dynamic_chunk(int64_t units) {
  return std::max<int64_t>(1, units / (8 * static_cast<int64_t>(num_threads())));
}

bool flash_short_path_applies(const AttentionShape& s, const AttentionOptions<float>& opt,
                              bool probes) {
  apply_simd_environment();
  return HWY_DYNAMIC_DISPATCH(FlashShortPathApplies)(s, opt, probes);
}

void attention_logit_row_simd(const AttentionLogit<float>& logit, int64_t i, int64_t j0,
                              int64_t n, int64_t limit, float* row) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(LogitRowOf)(logit, i, j0, static_cast<size_t>(n),
                                   static_cast<size_t>(limit), row);
}

void flash_forward_simd(const AttentionShape& s, const AttentionOptions<float>& opt, const float* q,
                        const float* k, const float* v, float* out, float* lse,
                        AttentionProbeStats* probes) {
  apply_simd_environment();
  FlashArgs a;
  a.shape = s, a.strides = token_strides(s), a.opt = &opt;
  a.q = q, a.k = k, a.v = v, a.out_mut = out, a.lse = lse, a.probe_cfg = probes;
  const int64_t BH = s.batch * s.heads;
  const int64_t Br = static_cast<int64_t>(HWY_DYNAMIC_DISPATCH(FlashQueryTileRows)());
  const int64_t ranges = split_count(BH, kForwardUnitsWanted, s.q_len, Br);
  const int64_t units = BH * ranges;
  const size_t ws_floats = HWY_DYNAMIC_DISPATCH(FlashWorkspaceFloats)(s, false);
  std::vector<ProbePartial> partial(probes ? units : 0);
  const int64_t chunk = dynamic_chunk(units);
#pragma omp parallel
  {
    Tensor<float> ws({static_cast<int64_t>(ws_floats)});
    ws.zero();  // once per call: the units rely on their padding being zero
#pragma omp for schedule(dynamic, chunk)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t bh = u / ranges;
      const auto [begin, end] = split_range(u % ranges, ranges, s.q_len, Br);
      if (begin < end)
        HWY_DYNAMIC_DISPATCH(FlashForwardUnit)(a, bh / s.heads, bh % s.heads, begin, end,
                                               ws.data(), probes ? &partial[u] : nullptr);
    }
  }
  if (!probes) return;
  std::vector<ProbePartial> per_head_unit(BH);  // the ranges of a (batch, head), in order
  for (int64_t u = 0; u < units; ++u) {
    ProbePartial& to = per_head_unit[u / ranges];
    const ProbePartial& from = partial[u];
    to.entropy += from.entropy, to.normalized_entropy += from.normalized_entropy;
    to.max_prob += from.max_prob, to.rows += from.rows;
    to.normalized_rows += from.normalized_rows, to.saturated += from.saturated;
    to.uniform += from.uniform;
  }
  merge_probe_partials(per_head_unit, s.heads, *probes);
}

void flash_backward_simd(const AttentionShape& s, const AttentionOptions<float>& opt,
                         const float* q, const float* k, const float* v, const float* out,
                         const float* dout, const float* lse, float* dq, float* dk, float* dv,
                         AttentionExtraGrads<float> extra) {
  apply_simd_environment();
  FlashArgs a;
  a.shape = s, a.strides = token_strides(s), a.opt = &opt;
  a.q = q, a.k = k, a.v = v, a.out = out, a.dout = dout, a.lse = const_cast<float*>(lse);
  a.dq = dq, a.dk = dk, a.dv = dv, a.dbias = extra.dbias;
  const int64_t BH = s.batch * s.heads, D = s.head_dim;
  const int64_t Bc = static_cast<int64_t>(HWY_DYNAMIC_DISPATCH(FlashKeyTileCols)());
  const int64_t ranges = split_count(BH, kBackwardUnitsWanted, s.k_len, Bc);
  const size_t ws_floats = HWY_DYNAMIC_DISPATCH(FlashWorkspaceFloats)(s, true);
  // dbias is shared by the batch: then a job is a (head, key range) with the batch loop inside
  // (ranges write disjoint columns of dbias); otherwise a (batch, head, key range).
  const bool per_head = extra.dbias != nullptr;
  const int64_t jobs = (per_head ? s.heads : BH) * ranges;
  std::vector<double> dscale(BH * ranges, 0.0);
  // dq shares [BH, ranges, q_len, D] when the keys are split; one range writes dq directly.
  std::vector<float> dq_parts(ranges > 1 ? BH * ranges * s.q_len * D : 0);
  const int64_t chunk = dynamic_chunk(jobs);
#pragma omp parallel
  {
    Tensor<float> ws({static_cast<int64_t>(ws_floats)});
    ws.zero();  // once per call: the units rely on their padding being zero
#pragma omp for schedule(dynamic, chunk)
    for (int64_t job = 0; job < jobs; ++job) {
      const int64_t r = job % ranges, head_job = job / ranges;
      const auto [begin, end] = split_range(r, ranges, s.k_len, Bc);
      for (int64_t b = per_head ? 0 : head_job / s.heads;
           b < (per_head ? s.batch : head_job / s.heads + 1); ++b) {
        const int64_t h = per_head ? head_job : head_job % s.heads;
        const int64_t bh = b * s.heads + h;
        float* part = ranges > 1 ? dq_parts.data() + (bh * ranges + r) * s.q_len * D : nullptr;
        if (begin < end || ranges == 1)  // one range always runs: it writes dq even with no keys
          dscale[bh * ranges + r] =
              HWY_DYNAMIC_DISPATCH(FlashBackwardUnit)(a, b, h, begin, end, ws.data(), part);
      }
    }
  }
  if (ranges > 1) {  // dq = the sum of the key ranges' shares, in range order
    parallel_for(BH, [&](int64_t bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      for (int64_t i = 0; i < s.q_len; ++i) {
        float* dst = dq + (b * s.q_len + i) * a.strides.q + h * D;
        for (int64_t e = 0; e < D; ++e) {
          float sum = 0.0f;
          for (int64_t r = 0; r < ranges; ++r)
            sum += dq_parts[((bh * ranges + r) * s.q_len + i) * D + e];
          dst[e] = sum;
        }
      }
    });
  }
  for (int64_t u = 0; extra.dhead_scales && u < BH * ranges; ++u)
    extra.dhead_scales[(u / ranges) % s.heads] += static_cast<float>(dscale[u]);
}

}  // namespace detail

}  // namespace scalelab
#endif  // HWY_ONCE
