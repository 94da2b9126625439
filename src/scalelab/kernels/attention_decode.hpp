// kernels/attention_decode: attention of ONE new query per sequence against a key/value cache,
// for incremental decoding (the decoder's cached step, model/decoder_cache.hpp).
//
// Same math as attention.hpp (the logit of attention_logit.hpp) with q_len = 1 and the query at
// position i' = k_len - 1 (so every cached key j < k_len is visible and the causal mask has
// nothing to hide):
//
//   s_j  = scale_h · q·k_j;  s_j = cap · tanh(s_j / cap) (softcap > 0)
//   s_j += bias[h, j] - alibi_slope_h · (k_len - 1 - j);  s_j = -inf if j >= key_lengths[b]
//   o    = sum_j softmax(s)_j v_j
//
// Layout: q and out [batch, heads·head_dim] (one row per query); k and v are the caches
// [sequences, capacity, heads·head_dim], of which positions [0, k_len) are read. Query b reads
// sequence sequence_of_row[b] (null: sequence b), so the hypotheses of a beam share one copy of
// their source's cross-attention keys. Forward only; float sums as the naive kernel.
#pragma once
#include <cstdint>

#include "scalelab/kernels/attention.hpp"

namespace scalelab {

struct AttentionDecodeShape {
  int64_t batch = 0, heads = 0, head_dim = 0;
  int64_t k_len = 0;     // keys visible to each query: positions [0, k_len)
  int64_t capacity = 0;  // positions per sequence in the cache (>= k_len)
};

// opt.bias, if given, is [heads, k_len] (the query's row of attention.hpp's [heads, 1, k_len]);
// opt.causal is ignored (nothing lies after the query).
template <class T>
void attention_decode_forward(const AttentionDecodeShape& shape, const AttentionOptions<T>& opt,
                              const T* q, const T* k, const T* v, const int64_t* sequence_of_row,
                              T* out);

}  // namespace scalelab
