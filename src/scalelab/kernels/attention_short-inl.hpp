// The flash kernel's path for short key sequences: query rows in the vector lanes.
//
// With few keys (the ledger's models: 16-token heads of d = 16) a row of logits is one or two
// vectors, and the row-at-a-time softmax of ForwardUnit / BackwardUnit spends its time in
// horizontal reductions (max and sum across a vector, one pair per row) and scalar bookkeeping per
// row. Here a tile of L query rows (L = lanes) is held transposed, each key's logits for the L rows
// one vector:
//
//   Qt[e, r]  = q[i0 + r, e]                    (the tile's queries transposed: D × L)
//   St[j, :]  = sum_e k[j, e] · Qt[e, :]        (raw logits of key j for the L rows; Gemm)
//   x_j       = scale · St[j, :],  -inf where j >= visible(row)
//   m         = max_j x_j,  p_j = e^(x_j - m),  l = sum_j p_j        (down the keys, lane-wise)
//   o[r, :]   = (sum_j p_j[r] · v[j, :]) / l[r],  lse = m + log l    (Gemm: A = Pt read transposed)
//
// and backward, for each tile (FlashAttention-2's formulas, attention_flash.hpp):
//
//   Dt[j, :]  = sum_e v[j, e] · dOt[e, :]       (dp transposed; Gemm)
//   p_j       = e^(scale · St[j, :] - lse),  ds_j = p_j (Dt[j, :] - delta),  delta_r = do_r · o_r
//   dv[j, :] += sum_r p_j[r] do[i0 + r, :],  dk[j, :] += scale sum_r ds_j[r] q[i0 + r, :]
//   dq[r, :]  = scale sum_j ds_j[r] k[j, :],  dhead_scales += sum_j ds_j · St[j, :]
//
// Every product is the register-blocked Gemm of the including file; the softmax needs no
// horizontal reduction. The path applies (ShortPathApplies) where the logit is scale · raw and
// the masks (no soft-cap, bias or ALiBi), the head dimension is a whole number of vectors (q, k,
// v, do read in place), there are at most kShortMaxKeys keys and no probes are asked for; the
// backward also needs the unit to cover every key (one key range: kShortMaxKeys is below the key
// tile of 128). Values equal the row path's up to float summation order; the same twin,
// flash_*_plain, judges both (tests/kernels/attention_flash_test.cpp).
//
// Included by attention_flash_simd.cpp inside its per-target namespace, after Gemm, CopyRow,
// Transpose and DotInDouble, which it uses.

constexpr size_t kShortMaxKeys = 64;  // measured: docs/kernel-design.md, "Flash attention"

HWY_INLINE bool ShortPathApplies(const AttentionShape& s, const AttentionOptions<float>& opt,
                                 bool probes) {
  const size_t L = hn::Lanes(DF());
  return !probes && opt.softcap <= 0 && !opt.bias && !opt.alibi_slopes &&
         size_t(s.k_len) <= kShortMaxKeys && size_t(s.head_dim) % L == 0;
}

// Floats of workspace for one short unit: Qt, dOt [D × L]; St, Dt [k_len × L]; O or dQ [L × D];
// dK, dV [k_len × D]; three lane vectors (the forward uses Qt, St, O and its lanes).
size_t ShortWorkspaceFloats(const AttentionShape& s) {
  const size_t L = hn::Lanes(DF()), D = s.head_dim, Nk = s.k_len;
  return 2 * D * L + 2 * Nk * L + L * D + 2 * Nk * D + 3 * L;
}

// dst[e · L + r] = src[r · ld + e] for r < rows, 0 for rows <= r < L; e < D.
HWY_INLINE void TransposeRows(const float* HWY_RESTRICT src, size_t ld, size_t rows, size_t D,
                              float* HWY_RESTRICT dst) {
  const size_t L = hn::Lanes(DF());
  Transpose(src, ld, rows, D, dst, L);
  for (size_t r = rows; r < L; ++r)
    for (size_t e = 0; e < D; ++e) dst[e * L + r] = 0.0f;
}

// Forward of query rows [q_begin, q_end) of one (batch, head): o and lse.
void ShortForwardUnit(const detail::FlashArgs& a, int64_t b, int64_t h, int64_t q_begin,
                      int64_t q_end, float* ws) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const AttentionShape& s = a.shape;
  const AttentionOptions<float>& opt = *a.opt;
  const size_t D = s.head_dim, Nk = s.k_len;
  const float scale = AttentionLogit<float>(s, opt, h).scale;  // scale_h (attention_logit.hpp)
  float* Qt = ws;
  float* St = Qt + D * L;
  float* O = St + Nk * L;
  float* lanes = O + L * D;  // visible keys, then lse, then 1 / l
  float *visible = lanes, *lse_lanes = lanes + L, *inv_l = lanes + 2 * L;
  const size_t q_ld = a.strides.q, k_ld = a.strides.k, v_ld = a.strides.v;
  const float* q_rows = a.q + b * s.q_len * q_ld + h * D;
  const float* k_rows = a.k + b * s.k_len * k_ld + h * D;
  const float* v_rows = a.v + b * s.k_len * v_ld + h * D;
  const auto neg_inf = hn::Set(d, -HUGE_VALF), zero = hn::Zero(d), floor = hn::Set(d, -200.0f);
  const auto v_scale = hn::Set(d, scale);
  for (int64_t i0 = q_begin; i0 < q_end; i0 += L) {
    const size_t rows = std::min<size_t>(L, q_end - i0);
    size_t nk = 0;  // keys any row of the tile sees
    for (size_t r = 0; r < L; ++r) {
      const int64_t n = r < rows ? attention_visible_keys(s, opt, b, i0 + r) : 0;
      visible[r] = static_cast<float>(n);
      nk = std::max<size_t>(nk, n);
    }
    const auto v_visible = hn::Load(d, visible);
    auto m = neg_inf, l = zero;
    if (nk > 0) {
      TransposeRows(q_rows + i0 * q_ld, q_ld, rows, D, Qt);
      Gemm(nk, L, D, k_rows, k_ld, 1, Qt, L, St, L, false);  // St = k · Qt
      for (size_t j = 0; j < nk; ++j) {  // x_j = scale · raw, masked; m = max_j x_j
        const auto x = hn::IfThenElse(hn::Lt(hn::Set(d, float(j)), v_visible),
                                      hn::Mul(v_scale, hn::Load(d, St + j * L)), neg_inf);
        hn::Store(x, d, St + j * L);
        m = hn::Max(m, x);
      }
      const auto m_use = hn::IfThenElse(hn::Eq(m, neg_inf), zero, m);
      for (size_t j = 0; j < nk; ++j) {  // p_j = e^(x_j - m) (0 where masked), l = sum_j p_j
        const auto t = hn::Max(hn::Sub(hn::Load(d, St + j * L), m_use), floor);
        const auto p = hn::IfThenElseZero(hn::Lt(hn::Set(d, float(j)), v_visible), hn::Exp(d, t));
        hn::Store(p, d, St + j * L);
        l = hn::Add(l, p);
      }
      // O[r, :] = sum_j p_j[r] v[j, :]   (A(r, j) = St[j · L + r])
      Gemm(rows, D, nk, St, 1, L, v_rows, v_ld, O, D, false);
    }
    const auto has_keys = hn::Gt(l, zero);
    hn::Store(hn::IfThenElse(has_keys, hn::Add(m, hn::Log(d, l)), neg_inf), d, lse_lanes);
    hn::Store(hn::IfThenElseZero(has_keys, hn::Div(hn::Set(d, 1.0f), l)), d, inv_l);
    std::copy(lse_lanes, lse_lanes + rows, a.lse + (b * s.heads + h) * s.q_len + i0);
    for (size_t r = 0; r < rows; ++r) {
      float* oi = a.out_mut + (b * s.q_len + i0 + r) * a.strides.o + h * D;
      if (nk > 0) CopyRow(oi, O + r * D, D, inv_l[r]);
      else std::fill(oi, oi + D, 0.0f);
    }
  }
}

// Backward of one (batch, head) over all its keys: writes dq, dk, dv; returns the head's share of
// dhead_scales (sum_ij ds_ij raw_ij, before the scale).
double ShortBackwardUnit(const detail::FlashArgs& a, int64_t b, int64_t h, float* ws) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const AttentionShape& s = a.shape;
  const AttentionOptions<float>& opt = *a.opt;
  const size_t D = s.head_dim, Nk = s.k_len, Nq = s.q_len;
  const float scale = AttentionLogit<float>(s, opt, h).scale;  // scale_h (attention_logit.hpp)
  float* Qt = ws;
  float* dOt = Qt + D * L;
  float* St = dOt + D * L;
  float* Dt = St + Nk * L;
  float* dQ = Dt + Nk * L;
  float* dK = dQ + L * D;
  float* dV = dK + Nk * D;
  float* lanes = dV + Nk * D;  // visible keys, lse, delta
  float *visible = lanes, *lse_lanes = lanes + L, *delta = lanes + 2 * L;
  const size_t q_ld = a.strides.q, k_ld = a.strides.k, v_ld = a.strides.v, o_ld = a.strides.o;
  const float* q_rows = a.q + b * s.q_len * q_ld + h * D;
  const float* k_rows = a.k + b * s.k_len * k_ld + h * D;
  const float* v_rows = a.v + b * s.k_len * v_ld + h * D;
  const float* do_rows = a.dout + b * s.q_len * o_ld + h * D;
  const float* o_rows = a.out + b * s.q_len * o_ld + h * D;
  const float* lse = a.lse + (b * s.heads + h) * s.q_len;
  std::fill(dK, dK + 2 * Nk * D, 0.0f);  // the dK and dV accumulators
  const auto zero = hn::Zero(d), floor = hn::Set(d, -200.0f), v_scale = hn::Set(d, scale);
  auto vdscale = zero;
  for (size_t i0 = 0; i0 < Nq; i0 += L) {
    const size_t rows = std::min(L, Nq - i0);
    size_t nk = 0;
    for (size_t r = 0; r < L; ++r) {
      const bool live = r < rows && lse[i0 + r] != -HUGE_VALF;  // a row with no key has no p
      const int64_t n = live ? attention_visible_keys(s, opt, b, i0 + r) : 0;
      visible[r] = static_cast<float>(n);
      lse_lanes[r] = live ? lse[i0 + r] : 0.0f;
      delta[r] = r < rows ? static_cast<float>(DotInDouble(do_rows + (i0 + r) * o_ld,
                                                           o_rows + (i0 + r) * o_ld, D))
                          : 0.0f;
      nk = std::max<size_t>(nk, n);
    }
    if (nk == 0) {
      for (size_t r = 0; r < rows; ++r) {
        float* dqi = a.dq + (b * s.q_len + i0 + r) * q_ld + h * D;
        std::fill(dqi, dqi + D, 0.0f);
      }
      continue;
    }
    const auto v_visible = hn::Load(d, visible), v_lse = hn::Load(d, lse_lanes);
    const auto v_delta = hn::Load(d, delta);
    TransposeRows(q_rows + i0 * q_ld, q_ld, rows, D, Qt);
    TransposeRows(do_rows + i0 * o_ld, o_ld, rows, D, dOt);
    Gemm(nk, L, D, k_rows, k_ld, 1, Qt, L, St, L, false);   // raw logits
    Gemm(nk, L, D, v_rows, v_ld, 1, dOt, L, Dt, L, false);  // dp = do · vᵀ
    for (size_t j = 0; j < nk; ++j) {
      const auto seen = hn::Lt(hn::Set(d, float(j)), v_visible);
      const auto raw = hn::Load(d, St + j * L);
      const auto t = hn::Max(hn::MulSub(raw, v_scale, v_lse), floor);
      const auto p = hn::IfThenElseZero(seen, hn::Exp(d, t));
      const auto dp = hn::Load(d, Dt + j * L);
      const auto ds = hn::IfThenElseZero(seen, hn::Mul(p, hn::Sub(dp, v_delta)));
      vdscale = hn::MulAdd(ds, raw, vdscale);  // from x = scale · raw (masked lanes add 0)
      hn::Store(p, d, St + j * L);
      hn::Store(hn::Mul(ds, v_scale), d, Dt + j * L);
    }
    // dv_j += sum_r p_j[r] do_r;  dk_j += sum_r ds_j[r] q_r   (A(j, r) = Pt[j · L + r])
    Gemm(nk, D, rows, St, L, 1, do_rows + i0 * o_ld, o_ld, dV, D, true);
    Gemm(nk, D, rows, Dt, L, 1, q_rows + i0 * q_ld, q_ld, dK, D, true);
    // dq_r = sum_j ds_j[r] k_j   (A(r, j) = dSt[j · L + r])
    Gemm(rows, D, nk, Dt, 1, L, k_rows, k_ld, dQ, D, false);
    for (size_t r = 0; r < rows; ++r)
      CopyRow(a.dq + (b * s.q_len + i0 + r) * q_ld + h * D, dQ + r * D, D);
  }
  for (size_t j = 0; j < Nk; ++j) {
    CopyRow(a.dk + (b * s.k_len + j) * k_ld + h * D, dK + j * D, D);
    CopyRow(a.dv + (b * s.k_len + j) * v_ld + h * D, dV + j * D, D);
  }
  return opt.head_scales ? hn::GetLane(hn::SumOfLanes(d, vdscale)) : 0.0;
}
