#include "scalelab/kernels/rmsnorm.hpp"

#include <omp.h>

#include <cmath>
#include <algorithm>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/thread_partials.hpp"

namespace scalelab {
namespace {

template <class T>
void rmsnorm_row(const NormShape& s, const T* x, const T* gamma, T* y, T* rstd) {
  double sum_sq = 0;
  for (int64_t j = 0; j < s.cols; ++j) sum_sq += double(x[j]) * x[j];
  const double r = 1.0 / std::sqrt(sum_sq / s.cols + s.eps);
  for (int64_t j = 0; j < s.cols; ++j) y[j] = static_cast<T>(x[j] * r) * gamma[j];
  *rstd = static_cast<T>(r);
}

template <class T>
void rmsnorm_backward_row(const NormShape& s, const T* dy, const T* x, const T* gamma, T rstd,
                          T* dx, T* dgamma) {
  double mean_g_xhat = 0;  // mean(g * xhat), g = dy * gamma
  for (int64_t j = 0; j < s.cols; ++j) {
    const double xhat = double(x[j]) * rstd;
    mean_g_xhat += double(dy[j]) * gamma[j] * xhat;
    dgamma[j] += dy[j] * static_cast<T>(xhat);
  }
  mean_g_xhat /= s.cols;
  for (int64_t j = 0; j < s.cols; ++j) {
    const double xhat = double(x[j]) * rstd;
    dx[j] = static_cast<T>(rstd * (double(dy[j]) * gamma[j] - xhat * mean_g_xhat));
  }
}

}  // namespace

template <class T>
void rmsnorm_forward(const NormShape& s, const T* x, const T* gamma, T* y, T* rstd) {
  parallel_for(s.rows, [&](int64_t r) {
    rmsnorm_row(s, x + r * s.cols, gamma, y + r * s.cols, rstd + r);
  });
}

// Per-thread dgamma partials, reduced in thread order (deterministic for a fixed thread count),
// each on its own cache lines (kernels/thread_partials.hpp).
template <class T>
void rmsnorm_backward(const NormShape& s, const T* dy, const T* x, const T* gamma, const T* rstd,
                      T* dx, T* dgamma) {
  int64_t stride = 0;  // each thread's part, zeroed by its thread
  T* const parts = thread_partials<T>(num_threads(), s.cols, &stride);
  int team_size = 1;
#pragma omp parallel num_threads(num_threads())
  {
    const int t = omp_get_thread_num();
    if (t == 0) team_size = omp_get_num_threads();
    T* mine = parts + t * stride;
    std::fill(mine, mine + s.cols, T(0));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < s.rows; ++r)
      rmsnorm_backward_row(s, dy + r * s.cols, x + r * s.cols, gamma, rstd[r], dx + r * s.cols, mine);
  }
  for (int t = 0; t < team_size; ++t)
    for (int64_t j = 0; j < s.cols; ++j) dgamma[j] += parts[t * stride + j];
}

template <class T>
void rmsnorm_forward_ref(const NormShape& s, const T* x, const T* gamma, T* y, T* rstd) {
  for (int64_t r = 0; r < s.rows; ++r) rmsnorm_row(s, x + r * s.cols, gamma, y + r * s.cols, rstd + r);
}

template <class T>
void rmsnorm_backward_ref(const NormShape& s, const T* dy, const T* x, const T* gamma,
                          const T* rstd, T* dx, T* dgamma) {
  for (int64_t r = 0; r < s.rows; ++r)
    rmsnorm_backward_row(s, dy + r * s.cols, x + r * s.cols, gamma, rstd[r], dx + r * s.cols, dgamma);
}

#define SL_INSTANTIATE(T)                                                                       \
  template void rmsnorm_forward<T>(const NormShape&, const T*, const T*, T*, T*);               \
  template void rmsnorm_backward<T>(const NormShape&, const T*, const T*, const T*, const T*,   \
                                    T*, T*);                                                    \
  template void rmsnorm_forward_ref<T>(const NormShape&, const T*, const T*, T*, T*);           \
  template void rmsnorm_backward_ref<T>(const NormShape&, const T*, const T*, const T*,         \
                                        const T*, T*, T*);
SL_INSTANTIATE(float)
SL_INSTANTIATE(double)
#undef SL_INSTANTIATE

}  // namespace scalelab
