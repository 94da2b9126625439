#include "scalelab/kernels/rope.hpp"

#include <cmath>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

namespace scalelab {
namespace {

template <class T>
void rotate(const RopeShape& s, T* x, double direction, bool parallel) {
  SL_CHECK(s.head_dim % 2 == 0, "RoPE needs an even head dimension, got head_dim = ", s.head_dim);
  const int64_t half = s.head_dim / 2;
  const int64_t stride = s.token_stride ? s.token_stride : s.heads * s.head_dim;
  // cos/sin table per position: [len, half]
  std::vector<double> cos_t(s.len * half), sin_t(s.len * half);
  for (int64_t p = 0; p < s.len; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double theta = double(p + s.offset) * std::pow(s.base, -2.0 * double(i) / double(s.head_dim));
      cos_t[p * half + i] = std::cos(theta);
      sin_t[p * half + i] = direction * std::sin(theta);
    }
  auto token = [&](int64_t bp) {
    const int64_t p = bp % s.len;
    for (int64_t h = 0; h < s.heads; ++h) {
      T* v = x + bp * stride + h * s.head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const double c = cos_t[p * half + i], sn = sin_t[p * half + i];
        const double a = v[i], b = v[i + half];
        v[i] = static_cast<T>(a * c - b * sn);
        v[i + half] = static_cast<T>(a * sn + b * c);
      }
    }
  };
  if (parallel) parallel_for(s.batch * s.len, token);
  else for (int64_t bp = 0; bp < s.batch * s.len; ++bp) token(bp);
}

}  // namespace

template <class T>
void rope_forward(const RopeShape& s, T* x) { rotate(s, x, +1.0, true); }
template <class T>
void rope_backward(const RopeShape& s, T* dx) { rotate(s, dx, -1.0, true); }
template <class T>
void rope_forward_ref(const RopeShape& s, T* x) { rotate(s, x, +1.0, false); }

template void rope_forward<float>(const RopeShape&, float*);
template void rope_forward<double>(const RopeShape&, double*);
template void rope_backward<float>(const RopeShape&, float*);
template void rope_backward<double>(const RopeShape&, double*);
template void rope_forward_ref<float>(const RopeShape&, float*);
template void rope_forward_ref<double>(const RopeShape&, double*);

}  // namespace scalelab
