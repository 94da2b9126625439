// kernels/attention_logit: the attention logit transform of attention.hpp, written once.
//
// For query row i and key j of head h, from the raw dot product raw = q_i·k_j:
//
//   x    = scale_h · raw                  scale_h = head_scales[h] if given, else scale
//   x    = cap · tanh(x / cap)            only if softcap > 0
//   s_ij = x + bias[h, i, j] - slope_h · |i' - j|      i' = i + k_len - q_len (ALiBi)
//   key j is masked (s_ij = -inf) when j >= attention_visible_keys(b, i)
//
// AttentionLogit<T> resolves one head's constants once; its operator() is the scalar definition
// every kernel calls (naive, flash plain twin, decode) and the attention probes recompute. The
// float SIMD kernel evaluates whole rows with the same constants (LogitRow in
// attention_flash_simd.cpp, reachable as detail::attention_logit_row_simd); the two are tested
// equal in tests/kernels/attention_logit_test.cpp. A new logit knob goes here, in LogitRow, and in
// that test, and excludes the short-key path (ShortPathApplies in attention_short-inl.hpp, which
// computes scale · raw only).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "scalelab/kernels/attention.hpp"

namespace scalelab {

// Number of keys visible to query row i of batch b: keys j < visible are unmasked.
// causal: j <= i + k_len - q_len; padding: j < key_lengths[b].
template <class T>
inline int64_t attention_visible_keys(const AttentionShape& s, const AttentionOptions<T>& opt,
                                      int64_t b, int64_t i) {
  int64_t n = s.k_len;
  if (opt.key_lengths) n = std::min<int64_t>(n, opt.key_lengths[b]);
  if (opt.causal) n = std::min<int64_t>(n, i + s.k_len - s.q_len + 1);
  return std::max<int64_t>(n, 0);
}

// One head's logit transform.
template <class T>
struct AttentionLogit {
  T scale = T(1);           // scale_h
  T cap = T(0);             // soft-cap; <= 0: none
  T slope = T(0);           // ALiBi slope of the head; 0: none
  const T* bias = nullptr;  // this head's [q_len, k_len] block of the additive bias, or null
  int64_t q_len = 0, k_len = 0;

  AttentionLogit(const AttentionShape& s, const AttentionOptions<T>& opt, int64_t h)
      : scale(opt.head_scales ? opt.head_scales[h] : static_cast<T>(opt.scale)),
        cap(static_cast<T>(opt.softcap)),
        slope(opt.alibi_slopes ? opt.alibi_slopes[h] : T(0)),
        bias(opt.bias ? opt.bias + h * s.q_len * s.k_len : nullptr),
        q_len(s.q_len),
        k_len(s.k_len) {}

  // s_ij before masking.
  T operator()(int64_t i, int64_t j, T raw) const {
    T x = scale * raw;
    if (cap > 0) x = cap * std::tanh(x / cap);
    if (bias) x += bias[i * k_len + j];
    if (slope != T(0)) {
      const int64_t ii = i + k_len - q_len;
      x -= slope * static_cast<T>(ii >= j ? ii - j : j - ii);
    }
    return x;
  }

  // ds/dx of the soft-cap at x = scale · raw: 1 - tanh²(x / cap) (only meaningful when cap > 0).
  T softcap_gradient(T raw) const {
    const T t = std::tanh(scale * raw / cap);
    return T(1) - t * t;
  }
};

}  // namespace scalelab
