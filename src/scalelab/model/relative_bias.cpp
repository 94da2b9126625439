#include "scalelab/model/relative_bias.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace scalelab {

int64_t relative_position_bucket(int64_t relative_position, const RelativeBiasShape& s) {
  int64_t buckets = s.buckets, bucket = 0, n = 0;
  if (s.bidirectional) {
    buckets /= 2;
    if (relative_position > 0) bucket += buckets;
    n = std::llabs(relative_position);
  } else {
    n = std::max<int64_t>(-relative_position, 0);
  }
  const int64_t max_exact = buckets / 2;
  if (n < max_exact) return bucket + n;
  const double log_ratio = std::log(double(n) / max_exact) / std::log(double(s.max_distance) / max_exact);
  const int64_t large = max_exact + static_cast<int64_t>(log_ratio * double(buckets - max_exact));
  return bucket + std::min(large, buckets - 1);
}

template <class T>
void relative_bias_forward(const RelativeBiasShape& s, const T* table, int64_t heads, int64_t q_len,
                           int64_t k_len, T* bias) {
  for (int64_t i = 0; i < q_len; ++i)
    for (int64_t j = 0; j < k_len; ++j) {
      const int64_t b = relative_position_bucket(j - i, s);
      for (int64_t h = 0; h < heads; ++h) bias[(h * q_len + i) * k_len + j] = table[b * heads + h];
    }
}

template <class T>
void relative_bias_backward(const RelativeBiasShape& s, const T* dbias, int64_t heads,
                            int64_t q_len, int64_t k_len, T* dtable) {
  for (int64_t i = 0; i < q_len; ++i)
    for (int64_t j = 0; j < k_len; ++j) {
      const int64_t b = relative_position_bucket(j - i, s);
      for (int64_t h = 0; h < heads; ++h) dtable[b * heads + h] += dbias[(h * q_len + i) * k_len + j];
    }
}

template void relative_bias_forward<float>(const RelativeBiasShape&, const float*, int64_t, int64_t, int64_t, float*);
template void relative_bias_forward<double>(const RelativeBiasShape&, const double*, int64_t, int64_t, int64_t, double*);
template void relative_bias_backward<float>(const RelativeBiasShape&, const float*, int64_t, int64_t, int64_t, float*);
template void relative_bias_backward<double>(const RelativeBiasShape&, const double*, int64_t, int64_t, int64_t, double*);

}  // namespace scalelab
