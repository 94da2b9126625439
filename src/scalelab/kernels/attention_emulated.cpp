// Attention forward in an emulated format (attention_emulated.hpp): one query row at a time, every
// operation rounded and counted. Slow by design (scalar, double intermediates): it is an
// instrument, not the training path.
#include "scalelab/kernels/attention_emulated.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/attention_flash.hpp"

namespace scalelab {
namespace {

// One (batch, head): its q, k, v stored in the format, and the arithmetic.
struct HeadContext {
  const AttentionShape& s;
  const EmulatedAttentionOptions& opt;
  Emulated fmt, acc;  // the format, and the accumulation format
  float scale;        // the scale constant stored in the format
  std::vector<float> q, k, v;  // [len, head_dim], rounded
};

// Logits s_j of row i for keys [0, visible): q_before or logits_after (see the header).
void logits(HeadContext& c, int64_t i, int64_t visible, std::vector<float>& s) {
  const int64_t D = c.s.head_dim;
  const DType dt = c.opt.dtype, ac = c.opt.accumulate;
  std::vector<float> qi(c.q.begin() + i * D, c.q.begin() + (i + 1) * D);
  if (c.opt.scale_order == ScaleOrder::q_before)
    for (float& x : qi) x = c.fmt.mul(x, c.scale, PrecisionOp::q_scale);
  for (int64_t j = 0; j < visible; ++j) {
    s[j] = emulated_dot(dt, ac, qi.data(), 1, c.k.data() + j * D, 1, D, PrecisionOp::qk_matmul,
                        c.fmt.counters);
    if (c.opt.scale_order == ScaleOrder::logits_after)
      s[j] = c.fmt.mul(s[j], c.scale, PrecisionOp::logit_scale);
  }
}

// Naive: the whole row at once. o_i = sum_j round(e_j / l) v_j.
void row_naive(HeadContext& c, int64_t visible, std::vector<float>& s, float* o) {
  const int64_t D = c.s.head_dim;
  float m = 0.0f;
  if (c.opt.subtract_max) m = *std::max_element(s.begin(), s.begin() + visible);
  float l = 0.0f;
  for (int64_t j = 0; j < visible; ++j) {
    const float x = c.opt.subtract_max ? c.fmt.sub(s[j], m, PrecisionOp::softmax_max_sub) : s[j];
    s[j] = c.fmt.exp(x, PrecisionOp::softmax_exp);
    l = c.acc.add(l, s[j], PrecisionOp::softmax_sum);
  }
  for (int64_t j = 0; j < visible; ++j) s[j] = c.fmt.div(s[j], l, PrecisionOp::softmax_div);
  for (int64_t e = 0; e < D; ++e)
    o[e] = emulated_dot(c.opt.dtype, c.opt.accumulate, s.data(), 1, c.v.data() + e, D, visible,
                        PrecisionOp::pv_matmul, c.fmt.counters);
}

// Flash: tiles of keys with the online softmax, in the format (see the header).
void row_flash(HeadContext& c, int64_t visible, std::vector<float>& s, float* o) {
  const int64_t D = c.s.head_dim, T = c.opt.tile;
  float m = c.opt.subtract_max ? -HUGE_VALF : 0.0f, l = 0.0f;
  std::vector<float> acc(D, 0.0f);
  for (int64_t j0 = 0; j0 < visible; j0 += T) {
    const int64_t j1 = std::min(j0 + T, visible);
    float alpha = 1.0f, m_new = m;
    if (c.opt.subtract_max) {  // m' = max(m, tile max); alpha = e^(m - m')
      m_new = std::max(m, *std::max_element(s.begin() + j0, s.begin() + j1));
      alpha = m == -HUGE_VALF ? 0.0f
                              : c.fmt.exp(c.fmt.sub(m, m_new, PrecisionOp::softmax_max_sub),
                                          PrecisionOp::softmax_exp);
    }
    for (int64_t j = j0; j < j1; ++j) {
      const float x =
          c.opt.subtract_max ? c.fmt.sub(s[j], m_new, PrecisionOp::softmax_max_sub) : s[j];
      s[j] = c.fmt.exp(x, PrecisionOp::softmax_exp);
    }
    // l = alpha l + sum_j e_j;  acc = alpha acc + sum_j e_j v_j
    if (alpha != 1.0f) l = c.acc.mul(alpha, l, PrecisionOp::softmax_sum);
    for (int64_t j = j0; j < j1; ++j) l = c.acc.add(l, s[j], PrecisionOp::softmax_sum);
    for (int64_t e = 0; e < D; ++e) {
      float a = alpha != 1.0f ? c.acc.mul(alpha, acc[e], PrecisionOp::pv_matmul) : acc[e];
      for (int64_t j = j0; j < j1; ++j)
        a = c.acc.add(a, c.acc.mul(s[j], c.v[j * D + e], PrecisionOp::pv_matmul),
                      PrecisionOp::pv_matmul);
      acc[e] = a;
    }
    m = m_new;
  }
  for (int64_t e = 0; e < D; ++e) o[e] = c.fmt.div(acc[e], l, PrecisionOp::softmax_div);
}

}  // namespace

void attention_emulated_forward(const AttentionShape& s, const EmulatedAttentionOptions& opt,
                                const float* q, const float* k, const float* v, float* out,
                                OverflowCounters& counters) {
  detail::check_attention_shape(s);
  SL_CHECK(opt.accumulate == DType::f32 || opt.accumulate == opt.dtype, "accumulate = ",
           dtype_name(opt.accumulate), " is not allowed for dtype ", dtype_name(opt.dtype),
           ": use f32 or ", dtype_name(opt.dtype));
  SL_CHECK(opt.tile > 0, "emulated attention tile = ", opt.tile, " must be positive");
  const detail::TokenStrides st = detail::token_strides(s);
  const int64_t D = s.head_dim, BH = s.batch * s.heads;
  AttentionOptions<float> mask;  // only the masks, for attention_visible_keys
  mask.causal = opt.causal;
  mask.key_lengths = opt.key_lengths;
  std::vector<OverflowCounters> partial(BH);
  parallel_for(BH, [&](int64_t bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    OverflowCounters* cnt = &partial[bh];
    HeadContext c{s, opt, {opt.dtype, cnt}, {opt.accumulate, cnt},
                  static_cast<float>(round_to(opt.dtype, opt.scale)), {}, {}, {}};
    auto load = [&](const float* src, int64_t len, int64_t stride, std::vector<float>& dst) {
      dst.resize(len * D);
      for (int64_t t = 0; t < len; ++t)
        for (int64_t e = 0; e < D; ++e) dst[t * D + e] = c.fmt.cast(src[(b * len + t) * stride + h * D + e]);
    };
    load(q, s.q_len, st.q, c.q);
    load(k, s.k_len, st.k, c.k);
    load(v, s.k_len, st.v, c.v);
    std::vector<float> logit(s.k_len);
    for (int64_t i = 0; i < s.q_len; ++i) {
      float* o = out + (b * s.q_len + i) * st.o + h * D;
      const int64_t visible = attention_visible_keys(s, mask, b, i);
      if (visible == 0) {
        std::fill_n(o, D, 0.0f);
        continue;
      }
      logits(c, i, visible, logit);
      if (opt.algorithm == SoftmaxAlgorithm::flash) {
        row_flash(c, visible, logit, o);
      } else {
        row_naive(c, visible, logit, o);
      }
    }
  });
  for (const OverflowCounters& p : partial) counters.merge(p);
}

}  // namespace scalelab
