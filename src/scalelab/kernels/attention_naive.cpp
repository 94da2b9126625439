// The reference attention: materialises p for every (batch, head), one query row at a time.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/attention.hpp"
#include "scalelab/kernels/attention_flash.hpp"  // detail::token_strides, check_attention_shape
#include "scalelab/kernels/attention_logit.hpp"

namespace scalelab {
namespace {

template <class T>
T dot(const T* a, const T* b, int64_t n) {
  T acc = 0;
  for (int64_t d = 0; d < n; ++d) acc += a[d] * b[d];
  return acc;
}

}  // namespace

template <class T>
void attention_naive_forward(const AttentionShape& s, const AttentionOptions<T>& opt, const T* q,
                             const T* k, const T* v, T* out, AttentionSaved<T>& saved) {
  detail::check_attention_shape(s);
  const detail::TokenStrides st = detail::token_strides(s);
  const int64_t D = s.head_dim;
  saved.probs.resize({s.batch, s.heads, s.q_len, s.k_len});
  parallel_for(s.batch * s.heads, [&](int64_t bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const AttentionLogit<T> logit(s, opt, h);
    for (int64_t i = 0; i < s.q_len; ++i) {
      const T* qi = q + (b * s.q_len + i) * st.q + h * D;
      T* p = saved.probs.data() + (bh * s.q_len + i) * s.k_len;
      const int64_t visible = attention_visible_keys(s, opt, b, i);
      // s_i, then p_i = softmax(s_i) with masked entries at probability 0.
      T max_s = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < s.k_len; ++j) {
        if (j >= visible) {
          p[j] = -std::numeric_limits<T>::infinity();
          continue;
        }
        p[j] = logit(i, j, dot(qi, k + (b * s.k_len + j) * st.k + h * D, D));
        max_s = std::max(max_s, p[j]);
      }
      T sum = 0;
      for (int64_t j = 0; j < s.k_len; ++j) {
        p[j] = max_s == -std::numeric_limits<T>::infinity() ? T(0) : std::exp(p[j] - max_s);
        sum += p[j];
      }
      const T inv = sum > 0 ? T(1) / sum : T(0);
      for (int64_t j = 0; j < s.k_len; ++j) p[j] *= inv;
      // o_i = sum_j p_ij v_j
      T* oi = out + (b * s.q_len + i) * st.o + h * D;
      for (int64_t d = 0; d < D; ++d) oi[d] = 0;
      for (int64_t j = 0; j < s.k_len; ++j) {
        if (p[j] == T(0)) continue;
        const T* vj = v + (b * s.k_len + j) * st.v + h * D;
        for (int64_t d = 0; d < D; ++d) oi[d] += p[j] * vj[d];
      }
    }
  });
}

template <class T>
void attention_naive_backward(const AttentionShape& s, const AttentionOptions<T>& opt, const T* q,
                              const T* k, const T* v, const T* dout, const AttentionSaved<T>& saved,
                              T* dq, T* dk, T* dv, AttentionExtraGrads<T> extra) {
  detail::check_attention_shape(s);
  const detail::TokenStrides st = detail::token_strides(s);
  const int64_t D = s.head_dim;
  // Per-(batch, head) partial sums of the shared gradients, reduced below in a fixed order.
  std::vector<T> dscale_partial(extra.dhead_scales ? s.batch * s.heads : 0, T(0));
  std::vector<T> dbias_partial(extra.dbias ? s.batch * s.heads * s.q_len * s.k_len : 0, T(0));
  for (int64_t b = 0; b < s.batch; ++b) {  // dq, dk, dv are overwritten
    for (int64_t i = 0; i < s.q_len; ++i)
      for (int64_t d = 0; d < s.heads * D; ++d) dq[(b * s.q_len + i) * st.q + d] = 0;
    for (int64_t j = 0; j < s.k_len; ++j)
      for (int64_t d = 0; d < s.heads * D; ++d) {
        dk[(b * s.k_len + j) * st.k + d] = 0;
        dv[(b * s.k_len + j) * st.v + d] = 0;
      }
  }
  parallel_for(s.batch * s.heads, [&](int64_t bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const AttentionLogit<T> logit(s, opt, h);
    const T scale = logit.scale;
    std::vector<T> ds(s.k_len);
    for (int64_t i = 0; i < s.q_len; ++i) {
      const T* p = saved.probs.data() + (bh * s.q_len + i) * s.k_len;
      const T* qi = q + (b * s.q_len + i) * st.q + h * D;
      const T* doi = dout + (b * s.q_len + i) * st.o + h * D;
      // dv_j += p_ij do_i (from o_i = sum_j p_ij v_j); dp_ij = do_i · v_j
      T row_dot = 0;  // sum_j dp_ij p_ij
      for (int64_t j = 0; j < s.k_len; ++j) {
        if (p[j] == T(0)) {
          ds[j] = 0;
          continue;
        }
        const T* vj = v + (b * s.k_len + j) * st.v + h * D;
        T* dvj = dv + (b * s.k_len + j) * st.v + h * D;
        for (int64_t d = 0; d < D; ++d) dvj[d] += p[j] * doi[d];
        ds[j] = dot(doi, vj, D);
        row_dot += ds[j] * p[j];
      }
      // ds_ij = p_ij (dp_ij - row_dot)   (from p_i = softmax(s_i))
      for (int64_t j = 0; j < s.k_len; ++j) ds[j] = p[j] * (ds[j] - row_dot);
      if (extra.dbias) {  // from s += bias
        T* db = dbias_partial.data() + (bh * s.q_len + i) * s.k_len;
        for (int64_t j = 0; j < s.k_len; ++j) db[j] += ds[j];
      }
      T* dqi = dq + (b * s.q_len + i) * st.q + h * D;
      for (int64_t j = 0; j < s.k_len; ++j) {
        if (ds[j] == T(0)) continue;
        const T* kj = k + (b * s.k_len + j) * st.k + h * D;
        // The raw score q·k is needed only by the soft-cap and the temperature gradients.
        const T raw = (logit.cap > 0 || extra.dhead_scales) ? dot(qi, kj, D) : T(0);
        T g = ds[j];
        if (logit.cap > 0) g *= logit.softcap_gradient(raw);  // from s = cap tanh(x / cap)
        if (extra.dhead_scales) dscale_partial[bh] += g * raw;  // from x = scale · raw
        T* dkj = dk + (b * s.k_len + j) * st.k + h * D;
        for (int64_t d = 0; d < D; ++d) {
          dqi[d] += scale * g * kj[d];
          dkj[d] += scale * g * qi[d];
        }
      }
    }
  });
  for (int64_t bh = 0; extra.dhead_scales && bh < s.batch * s.heads; ++bh)
    extra.dhead_scales[bh % s.heads] += dscale_partial[bh];
  if (extra.dbias) {
    const int64_t per_head = s.q_len * s.k_len;
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.heads; ++h)
        for (int64_t e = 0; e < per_head; ++e)
          extra.dbias[h * per_head + e] += dbias_partial[(b * s.heads + h) * per_head + e];
  }
}

#define SL_INSTANTIATE(T)                                                                        \
  template void attention_naive_forward<T>(const AttentionShape&, const AttentionOptions<T>&,    \
                                           const T*, const T*, const T*, T*, AttentionSaved<T>&); \
  template void attention_naive_backward<T>(const AttentionShape&, const AttentionOptions<T>&,   \
                                            const T*, const T*, const T*, const T*,              \
                                            const AttentionSaved<T>&, T*, T*, T*,                \
                                            AttentionExtraGrads<T>);
SL_INSTANTIATE(float)
SL_INSTANTIATE(double)
#undef SL_INSTANTIATE

}  // namespace scalelab
