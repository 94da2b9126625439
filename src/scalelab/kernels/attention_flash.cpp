// The plain tiled flash attention (double, and the _ref twins), the kernel selector, and the probe
// statistics shared with the naive path. The float fast path is in attention_flash_simd.cpp.
#include "scalelab/kernels/attention_flash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/attention_flash_simd.hpp"

namespace scalelab {
namespace detail {

TokenStrides token_strides(const AttentionShape& s) {
  const int64_t dense = s.heads * s.head_dim;
  return {s.q_stride ? s.q_stride : dense, s.k_stride ? s.k_stride : dense,
          s.v_stride ? s.v_stride : dense, s.o_stride ? s.o_stride : dense};
}

void check_attention_shape(const AttentionShape& s) {
  SL_CHECK(s.batch > 0 && s.heads > 0 && s.q_len > 0 && s.k_len > 0 && s.head_dim > 0,
           "attention: every size must be positive: batch=", s.batch, " heads=", s.heads,
           " q_len=", s.q_len, " k_len=", s.k_len, " head_dim=", s.head_dim);
  const int64_t dense = s.heads * s.head_dim;
  for (int64_t stride : {s.q_stride, s.k_stride, s.v_stride, s.o_stride})
    SL_CHECK(stride == 0 || stride >= dense, "attention: token stride ", stride,
             " is smaller than heads*head_dim = ", dense);
}

void merge_probe_partials(const std::vector<ProbePartial>& partial, int64_t heads,
                          AttentionProbeStats& probes) {
  auto fit = [heads](auto& v) {
    if (v.empty()) v.assign(heads, 0);
    SL_CHECK(static_cast<int64_t>(v.size()) == heads, "attention probes hold ", v.size(),
             " heads, the attention has ", heads);
  };
  fit(probes.entropy_sum), fit(probes.normalized_entropy_sum), fit(probes.max_prob_sum);
  fit(probes.rows), fit(probes.normalized_rows), fit(probes.saturated_rows);
  fit(probes.uniform_rows);
  for (size_t bh = 0; bh < partial.size(); ++bh) {
    const int64_t h = static_cast<int64_t>(bh) % heads;
    const ProbePartial& p = partial[bh];
    probes.entropy_sum[h] += p.entropy;
    probes.normalized_entropy_sum[h] += p.normalized_entropy;
    probes.max_prob_sum[h] += p.max_prob;
    probes.rows[h] += p.rows;
    probes.normalized_rows[h] += p.normalized_rows;
    probes.saturated_rows[h] += p.saturated;
    probes.uniform_rows[h] += p.uniform;
  }
}

}  // namespace detail

namespace {

constexpr int64_t kRows = 16;  // query rows per tile (plain path)
constexpr int64_t kCols = 16;  // keys per tile (plain path)

template <class T>
void check_key_lengths(const AttentionShape& s, const AttentionOptions<T>& opt) {
  for (int64_t b = 0; opt.key_lengths && b < s.batch; ++b)
    SL_CHECK(opt.key_lengths[b] >= 0 && opt.key_lengths[b] <= s.k_len, "attention: key_lengths[",
             b, "] = ", opt.key_lengths[b], " is outside [0, k_len = ", s.k_len, "]");
}

template <class T>
void flash_forward_plain(const AttentionShape& s, const AttentionOptions<T>& opt, const T* q,
                         const T* k, const T* v, T* out, T* lse, AttentionProbeStats* probes) {
  const detail::TokenStrides st = detail::token_strides(s);
  const int64_t D = s.head_dim, BH = s.batch * s.heads;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  std::vector<detail::ProbePartial> partial(probes ? BH : 0);
  parallel_for(BH, [&](int64_t bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const AttentionLogit<T> logit(s, opt, h);
    std::vector<T> acc(kRows * D), m(kRows), l(kRows), a(kRows), p(kCols);
    for (int64_t i0 = 0; i0 < s.q_len; i0 += kRows) {
      const int64_t rows = std::min(kRows, s.q_len - i0);
      std::fill(acc.begin(), acc.end(), T(0));
      std::fill(m.begin(), m.end(), neg_inf);
      std::fill(l.begin(), l.end(), T(0));
      std::fill(a.begin(), a.end(), T(0));
      int64_t key_end = 0;  // no visible key at or after key_end for any row of the tile
      for (int64_t r = 0; r < rows; ++r) key_end = std::max(key_end, attention_visible_keys(s, opt, b, i0 + r));
      for (int64_t j0 = 0; j0 < key_end; j0 += kCols) {
        const int64_t cols = std::min(kCols, key_end - j0);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = i0 + r, visible = attention_visible_keys(s, opt, b, i);
          const T* qi = q + (b * s.q_len + i) * st.q + h * D;
          // s_ij for the tile; masked keys at -inf.
          T tile_max = neg_inf;
          for (int64_t c = 0; c < cols; ++c) {
            const int64_t j = j0 + c;
            if (j >= visible) {
              p[c] = neg_inf;
              continue;
            }
            const T* kj = k + (b * s.k_len + j) * st.k + h * D;
            T raw = 0;
            for (int64_t e = 0; e < D; ++e) raw += qi[e] * kj[e];
            p[c] = logit(i, j, raw);
            tile_max = std::max(tile_max, p[c]);
          }
          // m' = max(m, max_j s_j); alpha = e^(m - m'); l = alpha l + sum_j e^(s_j - m')
          const T m_new = std::max(m[r], tile_max);
          const T m_use = m_new == neg_inf ? T(0) : m_new;
          const T alpha = l[r] > 0 ? std::exp(m[r] - m_use) : T(0);
          T sum = 0, weighted = 0;
          for (int64_t c = 0; c < cols; ++c) {
            const T e = p[c] == neg_inf ? T(0) : std::exp(p[c] - m_use);
            if (probes && e > 0) weighted += e * (p[c] - m_use);
            p[c] = e;
            sum += e;
          }
          // A' = alpha (A + (m - m') l) + sum_j e^(s_j - m')(s_j - m')
          a[r] = (l[r] > 0 ? alpha * (a[r] + (m[r] - m_use) * l[r]) : T(0)) + weighted;
          l[r] = alpha * l[r] + sum;
          m[r] = m_new;
          // acc = alpha acc + sum_j e^(s_j - m') v_j
          T* acc_r = acc.data() + r * D;
          for (int64_t e = 0; e < D; ++e) acc_r[e] *= alpha;
          for (int64_t c = 0; c < cols; ++c) {
            if (p[c] == T(0)) continue;
            const T* vj = v + (b * s.k_len + j0 + c) * st.v + h * D;
            for (int64_t e = 0; e < D; ++e) acc_r[e] += p[c] * vj[e];
          }
        }
      }
      // o = acc / l; lse = m + log l
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r;
        const T inv = l[r] > 0 ? T(1) / l[r] : T(0);
        T* oi = out + (b * s.q_len + i) * st.o + h * D;
        for (int64_t e = 0; e < D; ++e) oi[e] = acc[r * D + e] * inv;
        lse[bh * s.q_len + i] = l[r] > 0 ? m[r] + std::log(l[r]) : neg_inf;
        if (probes && l[r] > 0) {  // H = log l - A / l; max p = e^(m - lse) = 1 / l
          partial[bh].add_row(*probes, std::log(double(l[r])) - double(a[r]) / double(l[r]),
                              1.0 / double(l[r]), attention_visible_keys(s, opt, b, i));
        }
      }
    }
  });
  if (probes) detail::merge_probe_partials(partial, s.heads, *probes);
}

template <class T>
void flash_backward_plain(const AttentionShape& s, const AttentionOptions<T>& opt, const T* q,
                          const T* k, const T* v, const T* out, const T* dout, const T* lse, T* dq,
                          T* dk, T* dv, AttentionExtraGrads<T> extra) {
  const detail::TokenStrides st = detail::token_strides(s);
  const int64_t D = s.head_dim, BH = s.batch * s.heads;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  std::vector<T> dscale_partial(BH, T(0));
  auto one_head = [&](int64_t b, int64_t h) {
    const int64_t bh = b * s.heads + h;
    const AttentionLogit<T> logit(s, opt, h);
    const T scale = logit.scale;
    // dq, dk, dv are overwritten: zero this head's slices.
    for (int64_t i = 0; i < s.q_len; ++i) std::fill_n(dq + (b * s.q_len + i) * st.q + h * D, D, T(0));
    for (int64_t j = 0; j < s.k_len; ++j) {
      std::fill_n(dk + (b * s.k_len + j) * st.k + h * D, D, T(0));
      std::fill_n(dv + (b * s.k_len + j) * st.v + h * D, D, T(0));
    }
    // D_i = do_i · o_i = sum_j p_ij dp_ij
    std::vector<T> delta(s.q_len);
    for (int64_t i = 0; i < s.q_len; ++i) {
      const T* oi = out + (b * s.q_len + i) * st.o + h * D;
      const T* doi = dout + (b * s.q_len + i) * st.o + h * D;
      T sum = 0;
      for (int64_t e = 0; e < D; ++e) sum += doi[e] * oi[e];
      delta[i] = sum;
    }
    for (int64_t j0 = 0; j0 < s.k_len; j0 += kCols) {
      const int64_t j1 = std::min(j0 + kCols, s.k_len);
      for (int64_t i0 = 0; i0 < s.q_len; i0 += kRows) {
        const int64_t i1 = std::min(i0 + kRows, s.q_len);
        for (int64_t i = i0; i < i1; ++i) {
          const T lse_i = lse[bh * s.q_len + i];
          const int64_t visible = std::min(attention_visible_keys(s, opt, b, i), j1);
          if (lse_i == neg_inf) continue;
          const T* qi = q + (b * s.q_len + i) * st.q + h * D;
          const T* doi = dout + (b * s.q_len + i) * st.o + h * D;
          T* dqi = dq + (b * s.q_len + i) * st.q + h * D;
          for (int64_t j = j0; j < visible; ++j) {
            const T* kj = k + (b * s.k_len + j) * st.k + h * D;
            const T* vj = v + (b * s.k_len + j) * st.v + h * D;
            T raw = 0, dp = 0;
            for (int64_t e = 0; e < D; ++e) raw += qi[e] * kj[e];
            // p_ij = e^(s_ij - lse_i), recomputed (forward: l, m of the online softmax)
            const T p = std::exp(logit(i, j, raw) - lse_i);
            // dv_j += p_ij do_i   (from o_i = sum_j p_ij v_j)
            T* dvj = dv + (b * s.k_len + j) * st.v + h * D;
            for (int64_t e = 0; e < D; ++e) {
              dvj[e] += p * doi[e];
              dp += doi[e] * vj[e];
            }
            // ds_ij = p_ij (dp_ij - D_i)   (from p_i = softmax(s_i))
            const T ds = p * (dp - delta[i]);
            if (extra.dbias) extra.dbias[(h * s.q_len + i) * s.k_len + j] += ds;  // s += bias
            T g = ds;
            if (logit.cap > 0) g *= logit.softcap_gradient(raw);  // from s = cap tanh(x / cap)
            dscale_partial[bh] += g * raw;  // from x = scale · raw
            T* dkj = dk + (b * s.k_len + j) * st.k + h * D;
            for (int64_t e = 0; e < D; ++e) {
              dqi[e] += scale * g * kj[e];
              dkj[e] += scale * g * qi[e];
            }
          }
        }
      }
    }
  };
  if (extra.dbias) {  // dbias is shared by the batch: one thread per head
    parallel_for(s.heads, [&](int64_t h) {
      for (int64_t b = 0; b < s.batch; ++b) one_head(b, h);
    });
  } else {
    parallel_for(BH, [&](int64_t bh) { one_head(bh / s.heads, bh % s.heads); });
  }
  for (int64_t bh = 0; extra.dhead_scales && bh < BH; ++bh)
    extra.dhead_scales[bh % s.heads] += dscale_partial[bh];
}

template <class T>
void check_backward_inputs(const AttentionShape& s, const AttentionSaved<T>& saved) {
  SL_CHECK(saved.lse.numel() == s.batch * s.heads * s.q_len,
           "flash attention backward: saved.lse has ", saved.lse.numel(), " values, expected batch*heads*q_len = ",
           s.batch * s.heads * s.q_len, " (was the forward run with the flash kernel?)");
}

}  // namespace

template <class T>
void attention_flash_forward_ref(const AttentionShape& s, const AttentionOptions<T>& opt,
                                 const T* q, const T* k, const T* v, T* out,
                                 AttentionSaved<T>& saved, AttentionProbeStats* probes) {
  detail::check_attention_shape(s);
  check_key_lengths(s, opt);
  saved.lse.resize({s.batch, s.heads, s.q_len});
  flash_forward_plain(s, opt, q, k, v, out, saved.lse.data(), probes);
}

template <class T>
void attention_flash_backward_ref(const AttentionShape& s, const AttentionOptions<T>& opt,
                                  const T* q, const T* k, const T* v, const T* out, const T* dout,
                                  const AttentionSaved<T>& saved, T* dq, T* dk, T* dv,
                                  AttentionExtraGrads<T> extra) {
  detail::check_attention_shape(s);
  check_key_lengths(s, opt);
  check_backward_inputs(s, saved);
  flash_backward_plain(s, opt, q, k, v, out, dout, saved.lse.data(), dq, dk, dv, extra);
}

// float: the SIMD kernel; double: the plain path (the finite-difference checks need no speed).
template <class T>
void attention_flash_forward(const AttentionShape& s, const AttentionOptions<T>& opt, const T* q,
                             const T* k, const T* v, T* out, AttentionSaved<T>& saved,
                             AttentionProbeStats* probes) {
  if constexpr (std::is_same_v<T, float>) {
    detail::check_attention_shape(s);
    check_key_lengths(s, opt);
    saved.lse.resize({s.batch, s.heads, s.q_len});
    detail::flash_forward_simd(s, opt, q, k, v, out, saved.lse.data(), probes);
  } else {
    attention_flash_forward_ref(s, opt, q, k, v, out, saved, probes);
  }
}

template <class T>
void attention_flash_backward(const AttentionShape& s, const AttentionOptions<T>& opt, const T* q,
                              const T* k, const T* v, const T* out, const T* dout,
                              const AttentionSaved<T>& saved, T* dq, T* dk, T* dv,
                              AttentionExtraGrads<T> extra) {
  if constexpr (std::is_same_v<T, float>) {
    detail::check_attention_shape(s);
    check_key_lengths(s, opt);
    check_backward_inputs(s, saved);
    detail::flash_backward_simd(s, opt, q, k, v, out, dout, saved.lse.data(), dq, dk, dv, extra);
  } else {
    attention_flash_backward_ref(s, opt, q, k, v, out, dout, saved, dq, dk, dv, extra);
  }
}

template <class T>
void attention_probe_stats_from_probs(const AttentionShape& s, const AttentionOptions<T>& opt,
                                      const T* probs, AttentionProbeStats& probes) {
  const int64_t BH = s.batch * s.heads;
  std::vector<detail::ProbePartial> partial(BH);
  parallel_for(BH, [&](int64_t bh) {
    for (int64_t i = 0; i < s.q_len; ++i) {
      const int64_t n = attention_visible_keys(s, opt, bh / s.heads, i);
      if (n == 0) continue;
      const T* p = probs + (bh * s.q_len + i) * s.k_len;
      double entropy = 0, max_p = 0;
      for (int64_t j = 0; j < s.k_len; ++j) {
        if (p[j] > 0) entropy -= double(p[j]) * std::log(double(p[j]));
        max_p = std::max(max_p, double(p[j]));
      }
      partial[bh].add_row(probes, entropy, max_p, n);
    }
  });
  detail::merge_probe_partials(partial, s.heads, probes);
}

const char* attention_kernel_name(AttentionKernel kernel) {
  return kernel == AttentionKernel::naive ? "naive" : "flash";
}

AttentionKernel parse_attention_kernel(const std::string& name) {
  if (name == "naive") return AttentionKernel::naive;
  if (name == "flash") return AttentionKernel::flash;
  throw_error("attention.kernel = \"", name, "\" is not allowed: use \"naive\" or \"flash\"");
}

template <class T>
void attention_forward(AttentionKernel kernel, const AttentionShape& s,
                       const AttentionOptions<T>& opt, const T* q, const T* k, const T* v, T* out,
                       AttentionSaved<T>& saved, AttentionProbeStats* probes) {
  if (kernel == AttentionKernel::flash) {
    attention_flash_forward(s, opt, q, k, v, out, saved, probes);
    return;
  }
  attention_naive_forward(s, opt, q, k, v, out, saved);
  if (probes) attention_probe_stats_from_probs(s, opt, saved.probs.data(), *probes);
}

template <class T>
void attention_backward(AttentionKernel kernel, const AttentionShape& s,
                        const AttentionOptions<T>& opt, const T* q, const T* k, const T* v,
                        const T* out, const T* dout, const AttentionSaved<T>& saved, T* dq, T* dk,
                        T* dv, AttentionExtraGrads<T> extra) {
  if (kernel == AttentionKernel::flash) {
    attention_flash_backward(s, opt, q, k, v, out, dout, saved, dq, dk, dv, extra);
  } else {
    attention_naive_backward(s, opt, q, k, v, dout, saved, dq, dk, dv, extra);
  }
}

#define SL_INSTANTIATE(T)                                                                         \
  template void attention_flash_forward<T>(const AttentionShape&, const AttentionOptions<T>&,     \
                                           const T*, const T*, const T*, T*, AttentionSaved<T>&,  \
                                           AttentionProbeStats*);                                 \
  template void attention_flash_backward<T>(                                                      \
      const AttentionShape&, const AttentionOptions<T>&, const T*, const T*, const T*, const T*,  \
      const T*, const AttentionSaved<T>&, T*, T*, T*, AttentionExtraGrads<T>);                    \
  template void attention_flash_forward_ref<T>(const AttentionShape&, const AttentionOptions<T>&, \
                                               const T*, const T*, const T*, T*,                  \
                                               AttentionSaved<T>&, AttentionProbeStats*);         \
  template void attention_flash_backward_ref<T>(                                                  \
      const AttentionShape&, const AttentionOptions<T>&, const T*, const T*, const T*, const T*,  \
      const T*, const AttentionSaved<T>&, T*, T*, T*, AttentionExtraGrads<T>);                    \
  template void attention_probe_stats_from_probs<T>(const AttentionShape&,                        \
                                                    const AttentionOptions<T>&, const T*,         \
                                                    AttentionProbeStats&);                        \
  template void attention_forward<T>(AttentionKernel, const AttentionShape&,                      \
                                     const AttentionOptions<T>&, const T*, const T*, const T*,    \
                                     T*, AttentionSaved<T>&, AttentionProbeStats*);               \
  template void attention_backward<T>(AttentionKernel, const AttentionShape&,                     \
                                      const AttentionOptions<T>&, const T*, const T*, const T*,   \
                                      const T*, const T*, const AttentionSaved<T>&, T*, T*, T*,   \
                                      AttentionExtraGrads<T>);
SL_INSTANTIATE(float)
SL_INSTANTIATE(double)
#undef SL_INSTANTIATE

}  // namespace scalelab
