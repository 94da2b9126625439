#include "scalelab/kernels/layernorm.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <omp.h>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/layernorm_simd.hpp"
#include "scalelab/kernels/thread_partials.hpp"

namespace scalelab {
namespace {

// Statistics are accumulated in double whatever T is: cheap, and keeps f32 rows of large mean
// from losing the variance to cancellation.
template <class T>
void layernorm_row(const NormShape& s, const T* __restrict x, const T* __restrict gamma,
                   const T* __restrict beta, T* __restrict y, T* mean, T* rstd) {
  double sum = 0, sum_sq = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < s.cols; ++j) sum += x[j];
  const double mu = sum / s.cols;
#pragma omp simd reduction(+ : sum_sq)
  for (int64_t j = 0; j < s.cols; ++j) sum_sq += (x[j] - mu) * (x[j] - mu);
  const double r = 1.0 / std::sqrt(sum_sq / s.cols + s.eps);
  for (int64_t j = 0; j < s.cols; ++j) y[j] = static_cast<T>((x[j] - mu) * r) * gamma[j] + beta[j];
  *mean = static_cast<T>(mu);
  *rstd = static_cast<T>(r);
}

// dx for one row; dgamma/dbeta contributions go to the given row-private accumulators.
// The mean is recomputed in double rather than read from the saved T value: in float, a row of
// large mean and small spread would lose xhat's low bits to the rounded mean.
template <class T>
void layernorm_backward_row(const NormShape& s, const T* __restrict dy, const T* __restrict x,
                            const T* __restrict gamma, T, T rstd, T* __restrict dx,
                            T* __restrict dgamma, T* __restrict dbeta) {
  double mean = 0;
#pragma omp simd reduction(+ : mean)
  for (int64_t j = 0; j < s.cols; ++j) mean += x[j];
  mean /= s.cols;
  double mean_g = 0, mean_g_xhat = 0;  // mean(g), mean(g * xhat) with g = dy * gamma
#pragma omp simd reduction(+ : mean_g, mean_g_xhat)
  for (int64_t j = 0; j < s.cols; ++j) {
    const double xhat = (x[j] - mean) * rstd;
    const double g = static_cast<double>(dy[j]) * gamma[j];
    mean_g += g;
    mean_g_xhat += g * xhat;
    dgamma[j] += dy[j] * static_cast<T>(xhat);
    dbeta[j] += dy[j];
  }
  mean_g /= s.cols;
  mean_g_xhat /= s.cols;
  for (int64_t j = 0; j < s.cols; ++j) {
    const double xhat = (x[j] - mean) * rstd;
    const double g = static_cast<double>(dy[j]) * gamma[j];
    dx[j] = static_cast<T>(rstd * (g - mean_g - xhat * mean_g_xhat));
  }
}

}  // namespace

// Rows per task of the forward: a few rows' worth of work per SIMD dispatch.
constexpr int64_t kForwardRowChunk = 32;

template <class T>
void layernorm_forward(const NormShape& s, const T* x, const T* gamma, const T* beta, T* y, T* mean,
                       T* rstd) {
  parallel_for((s.rows + kForwardRowChunk - 1) / kForwardRowChunk, [&](int64_t chunk) {
    const int64_t r0 = chunk * kForwardRowChunk, n = std::min(kForwardRowChunk, s.rows - r0);
    if constexpr (std::is_same_v<T, float>) {  // the vectorised twin of layernorm_row
      layernorm_rows_simd(x + r0 * s.cols, gamma, beta, y + r0 * s.cols, mean + r0, rstd + r0, n,
                          s.cols, s.eps);
    } else {
      for (int64_t r = r0; r < r0 + n; ++r)
        layernorm_row(s, x + r * s.cols, gamma, beta, y + r * s.cols, mean + r, rstd + r);
    }
  });
}

// Thread t of the team takes rows [rows·t/team, rows·(t+1)/team) and sums their dgamma/dbeta
// into its own buffer, in row order; the buffers are reduced at the end in thread order
// (deterministic for a fixed thread count). Each thread's buffer sits on its own cache lines
// (kernels/thread_partials.hpp).
template <class T>
void layernorm_backward(const NormShape& s, const T* dy, const T* x, const T* gamma, const T* mean,
                        const T* rstd, T* dx, T* dgamma, T* dbeta) {
  int64_t stride = 0;  // each thread's part: dgamma then dbeta, zeroed by its thread
  T* const parts = thread_partials<T>(num_threads(), 2 * s.cols, &stride);
  int team_size = 1;
#pragma omp parallel num_threads(num_threads())
  {
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    if (t == 0) team_size = team;
    T* my_dgamma = parts + t * stride;
    T* my_dbeta = my_dgamma + s.cols;
    std::fill(my_dgamma, my_dgamma + 2 * s.cols, T(0));
    const int64_t r0 = s.rows * t / team, r1 = s.rows * (t + 1) / team;
    if constexpr (std::is_same_v<T, float>) {  // the vectorised twin of layernorm_backward_row
      layernorm_backward_rows_simd(dy + r0 * s.cols, x + r0 * s.cols, gamma, rstd + r0,
                                   dx + r0 * s.cols, my_dgamma, my_dbeta, r1 - r0, s.cols);
    } else {
      for (int64_t r = r0; r < r1; ++r)
        layernorm_backward_row(s, dy + r * s.cols, x + r * s.cols, gamma, mean[r], rstd[r],
                               dx + r * s.cols, my_dgamma, my_dbeta);
    }
  }
  for (int t = 0; t < team_size; ++t) {
    const T* pg = parts + t * stride;
    for (int64_t j = 0; j < s.cols; ++j) {
      dgamma[j] += pg[j];
      dbeta[j] += pg[s.cols + j];
    }
  }
}

template <class T>
void layernorm_forward_ref(const NormShape& s, const T* x, const T* gamma, const T* beta, T* y,
                           T* mean, T* rstd) {
  for (int64_t r = 0; r < s.rows; ++r)
    layernorm_row(s, x + r * s.cols, gamma, beta, y + r * s.cols, mean + r, rstd + r);
}

template <class T>
void layernorm_backward_ref(const NormShape& s, const T* dy, const T* x, const T* gamma,
                            const T* mean, const T* rstd, T* dx, T* dgamma, T* dbeta) {
  for (int64_t r = 0; r < s.rows; ++r)
    layernorm_backward_row(s, dy + r * s.cols, x + r * s.cols, gamma, mean[r], rstd[r],
                           dx + r * s.cols, dgamma, dbeta);
}

#define SL_INSTANTIATE(T)                                                                       \
  template void layernorm_forward<T>(const NormShape&, const T*, const T*, const T*, T*, T*, T*); \
  template void layernorm_backward<T>(const NormShape&, const T*, const T*, const T*, const T*, \
                                      const T*, T*, T*, T*);                                    \
  template void layernorm_forward_ref<T>(const NormShape&, const T*, const T*, const T*, T*, T*, \
                                         T*);                                                   \
  template void layernorm_backward_ref<T>(const NormShape&, const T*, const T*, const T*,       \
                                          const T*, const T*, T*, T*, T*);
SL_INSTANTIATE(float)
SL_INSTANTIATE(double)
#undef SL_INSTANTIATE

}  // namespace scalelab
