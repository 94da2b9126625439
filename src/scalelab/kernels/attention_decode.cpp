#include "scalelab/kernels/attention_decode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/attention_logit.hpp"

namespace scalelab {

template <class T>
void attention_decode_forward(const AttentionDecodeShape& s, const AttentionOptions<T>& opt,
                              const T* q, const T* k, const T* v, const int64_t* sequence_of_row,
                              T* out) {
  SL_CHECK(s.k_len >= 1 && s.k_len <= s.capacity, "attention_decode: k_len ", s.k_len,
           " must be in [1, capacity = ", s.capacity, "]");
  const int64_t D = s.head_dim, width = s.heads * D, L = s.k_len;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  // The one new query is the last row of the attention over the cache (i' = k_len - 1).
  const AttentionShape one_query{.batch = s.batch, .heads = s.heads, .q_len = 1, .k_len = L,
                                 .head_dim = D};
  parallel_for(s.batch * s.heads, [&](int64_t bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const int64_t seq = sequence_of_row ? sequence_of_row[b] : b;
    const T* qb = q + b * width + h * D;
    const T* kb = k + seq * s.capacity * width + h * D;
    const T* vb = v + seq * s.capacity * width + h * D;
    const AttentionLogit<T> logit(one_query, opt, h);
    const int64_t visible = attention_visible_keys(one_query, opt, b, 0);
    thread_local std::vector<T> p;
    p.resize(L);
    T max_s = neg_inf;
    for (int64_t j = 0; j < visible; ++j) {
      const T* kj = kb + j * width;
      T raw = 0;
      for (int64_t d = 0; d < D; ++d) raw += qb[d] * kj[d];
      p[j] = logit(0, j, raw);
      max_s = std::max(max_s, p[j]);
    }
    T sum = 0;
    for (int64_t j = 0; j < visible; ++j) sum += p[j] = std::exp(p[j] - max_s);
    const T inv = sum > 0 ? T(1) / sum : T(0);  // no visible key: o = 0, as attention.hpp
    T* o = out + b * width + h * D;
    for (int64_t d = 0; d < D; ++d) o[d] = 0;
    for (int64_t j = 0; j < visible; ++j) {
      const T pj = p[j] * inv;
      const T* vj = vb + j * width;
      for (int64_t d = 0; d < D; ++d) o[d] += pj * vj[d];
    }
  });
}

template void attention_decode_forward<float>(const AttentionDecodeShape&, const AttentionOptions<float>&,
                                              const float*, const float*, const float*,
                                              const int64_t*, float*);
template void attention_decode_forward<double>(const AttentionDecodeShape&,
                                               const AttentionOptions<double>&, const double*,
                                               const double*, const double*, const int64_t*, double*);

}  // namespace scalelab
