#include "scalelab/kernels/activation.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/parallel.hpp"

namespace scalelab {
namespace {

template <class T>
T act_value(Activation act, T x) {
  if (act == Activation::relu) return x > T(0) ? x : T(0);
  return T(0.5) * x * (T(1) + std::erf(x * T(M_SQRT1_2)));
}

template <class T>
T act_derivative(Activation act, T x) {
  if (act == Activation::relu) return x > T(0) ? T(1) : T(0);
  const T cdf = T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
  const T pdf = std::exp(T(-0.5) * x * x) * T(0.5 * M_2_SQRTPI * M_SQRT1_2);  // 1/sqrt(2 pi)
  return cdf + x * pdf;
}

constexpr int64_t kChunk = 4096;  // elements per parallel task

// Runs fn(begin, end) over [0, n) in chunks across the threads.
template <class Fn>
void chunked(int64_t n, Fn&& fn) {
  parallel_for((n + kChunk - 1) / kChunk,
               [&](int64_t c) { fn(c * kChunk, std::min(n, (c + 1) * kChunk)); });
}

}  // namespace

// The fast versions pick the activation once per call (not per element) and mark each loop
// `omp simd`, so that the body vectorises; the per-element math is the reference's. Output i
// depends on input i only, so the output may alias an input (in-place use is safe). The ReLU
// backward loads dy unconditionally, so that the select is a vector blend, not a branch that
// mispredicts on half the elements.
template <class T>
void activation_forward(Activation act, const T* x, T* y, int64_t n) {
  if (act == Activation::relu) {
    chunked(n, [&](int64_t b, int64_t e) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) {
        const T v = x[i];
        y[i] = v < T(0) ? T(0) : v;  // = std::max(v, 0) (NaN and -0 kept), as a blend
      }
    });
  } else {
    chunked(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = act_value(Activation::gelu, x[i]);
    });
  }
}
template <class T>
void activation_backward(Activation act, const T* x, const T* dy, T* dx, int64_t n) {
  if (act == Activation::relu) {
    chunked(n, [&](int64_t b, int64_t e) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) {
        const T d = dy[i];
        dx[i] = x[i] > T(0) ? d : T(0);
      }
    });
  } else {
    chunked(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dx[i] = dy[i] * act_derivative(Activation::gelu, x[i]);
    });
  }
}
template <class T>
void activation_forward_ref(Activation act, const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = act_value(act, x[i]);
}
template <class T>
void activation_backward_ref(Activation act, const T* x, const T* dy, T* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * act_derivative(act, x[i]);
}

#define SL_INSTANTIATE(T)                                                                 \
  template void activation_forward<T>(Activation, const T*, T*, int64_t);                 \
  template void activation_backward<T>(Activation, const T*, const T*, T*, int64_t);      \
  template void activation_forward_ref<T>(Activation, const T*, T*, int64_t);             \
  template void activation_backward_ref<T>(Activation, const T*, const T*, T*, int64_t);
SL_INSTANTIATE(float)
SL_INSTANTIATE(double)
#undef SL_INSTANTIATE

}  // namespace scalelab
