// model/relative_bias: T5's relative position bias (Raffel et al. 2020; HF modeling_t5.py).
//
// The offset r = j - i of key j from query i falls in one of `buckets` buckets: exact buckets for
// small |r|, logarithmically wider ones up to max_distance, the last bucket beyond. Bidirectional
// (encoder) buckets split in half by the sign of r; unidirectional (decoder) ones count only
// r <= 0. Each head learns one scalar per bucket; the table is computed once per stack and shared
// by all its layers (added to the self-attention logits, no scale).
//   forward:  bias[h, i, j] = table[bucket(j - i), h]
//   backward: dtable[bucket(j - i), h] += sum over layers and batch of dbias[h, i, j]
#pragma once
#include <cstdint>

namespace scalelab {

struct RelativeBiasShape {
  int64_t buckets = 32, max_distance = 128;
  bool bidirectional = true;
};

int64_t relative_position_bucket(int64_t relative_position, const RelativeBiasShape& s);

// table [buckets, heads] -> bias [heads, q_len, k_len].
template <class T>
void relative_bias_forward(const RelativeBiasShape& s, const T* table, int64_t heads, int64_t q_len,
                           int64_t k_len, T* bias);
// dbias [heads, q_len, k_len] -> dtable [buckets, heads] (+=).
template <class T>
void relative_bias_backward(const RelativeBiasShape& s, const T* dbias, int64_t heads,
                            int64_t q_len, int64_t k_len, T* dtable);

}  // namespace scalelab
