// kernels/attention_flash: tiled ("flash") attention with an online softmax, forward and backward.
//
// Same math and layouts as attention.hpp; the N×N matrix p is never stored. For a block of query
// rows the keys are visited in tiles; each row keeps a running max m, a running sum l and an
// unnormalised output acc (Milakov & Gimelshein 2018; Dao et al. 2022):
//
//   s      = tile of logits (scale, soft-cap, bias, ALiBi, masks: attention_logit.hpp)
//   m'     = max(m, max_j s_j);   alpha = e^(m - m')
//   l      = alpha l + sum_j e^(s_j - m');   acc = alpha acc + sum_j e^(s_j - m') v_j
//   at the end: o = acc / l,  lse = m + log l    (a row with no visible key: o = 0, lse = -inf)
//
// The forward saves only lse [batch, heads, q_len]. The backward (FlashAttention-2 order: key tiles
// outer, query tiles inner) recomputes p_ij = e^(s_ij - lse_i) tile by tile and uses
// D_i = rowsum(do_i ⊙ o_i) = sum_j p_ij dp_ij, so ds_ij = p_ij (dp_ij - D_i) needs no second pass.
//
// float runs a SIMD kernel (attention_flash_simd.cpp, Highway, target chosen at run time), which
// computes short key sequences with query rows in the vector lanes instead (attention_short-inl.hpp:
// the same formulas, every key at once); double, and the _ref twins for both types, run a plain
// tiled loop with the same tiling logic.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "scalelab/kernels/attention.hpp"
#include "scalelab/kernels/attention_logit.hpp"

namespace scalelab {

template <class T>
void attention_flash_forward(const AttentionShape& shape, const AttentionOptions<T>& opt,
                             const T* q, const T* k, const T* v, T* out, AttentionSaved<T>& saved,
                             AttentionProbeStats* probes = nullptr);

// Overwrites dq, dk, dv; accumulates into extra. out is the forward's output.
template <class T>
void attention_flash_backward(const AttentionShape& shape, const AttentionOptions<T>& opt,
                              const T* q, const T* k, const T* v, const T* out, const T* dout,
                              const AttentionSaved<T>& saved, T* dq, T* dk, T* dv,
                              AttentionExtraGrads<T> extra = {});

// The plain twins (no SIMD), the reference for every compiled SIMD target.
template <class T>
void attention_flash_forward_ref(const AttentionShape& shape, const AttentionOptions<T>& opt,
                                 const T* q, const T* k, const T* v, T* out,
                                 AttentionSaved<T>& saved, AttentionProbeStats* probes = nullptr);
template <class T>
void attention_flash_backward_ref(const AttentionShape& shape, const AttentionOptions<T>& opt,
                                  const T* q, const T* k, const T* v, const T* out, const T* dout,
                                  const AttentionSaved<T>& saved, T* dq, T* dk, T* dv,
                                  AttentionExtraGrads<T> extra = {});

// Probe statistics from materialised probabilities p [batch, heads, q_len, k_len] (naive path);
// n_i is the number of keys the masks leave visible to row i.
template <class T>
void attention_probe_stats_from_probs(const AttentionShape& shape, const AttentionOptions<T>& opt,
                                      const T* probs, AttentionProbeStats& probes);

// The float kernel's SIMD target is chosen, listed and overridden (SCALELAB_SIMD) in one place for
// every kernel: kernels/simd_dispatch.hpp.

namespace detail {

// One (batch, head)'s share of AttentionProbeStats; merged per head in a fixed order.
struct ProbePartial {
  double entropy = 0, normalized_entropy = 0, max_prob = 0;
  int64_t rows = 0, normalized_rows = 0, saturated = 0, uniform = 0;
  // Row with entropy H (nats), largest probability max_p and n visible keys (n >= 1).
  void add_row(const AttentionProbeStats& cfg, double H, double max_p, int64_t n) {
    rows += 1;
    entropy += H;
    max_prob += max_p;
    if (max_p >= cfg.saturation_threshold) saturated += 1;
    if (n >= 2) {
      const double normalized = H / std::log(static_cast<double>(n));
      normalized_rows += 1;
      normalized_entropy += normalized;
      if (normalized >= cfg.uniform_threshold) uniform += 1;
    }
  }
};
// Adds partial[b * heads + h] into probes (per head h), resizing probes' vectors if empty.
void merge_probe_partials(const std::vector<ProbePartial>& partial, int64_t heads,
                          AttentionProbeStats& probes);

// Element strides between tokens (0 in the shape means dense heads*head_dim).
struct TokenStrides {
  int64_t q, k, v, o;
};
TokenStrides token_strides(const AttentionShape& s);
void check_attention_shape(const AttentionShape& s);

}  // namespace detail
}  // namespace scalelab
