#include "scalelab/kernels/softmax.hpp"

#include <cmath>
#include <limits>

#include "scalelab/core/parallel.hpp"

namespace scalelab {
namespace {

template <class T>
void softmax_row(const T* x, T* y, int64_t cols) {
  T max_x = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < cols; ++j) max_x = x[j] > max_x ? x[j] : max_x;
  if (max_x == -std::numeric_limits<T>::infinity()) {  // fully masked row
    for (int64_t j = 0; j < cols; ++j) y[j] = 0;
    return;
  }
  T sum = 0;
  for (int64_t j = 0; j < cols; ++j) {
    y[j] = std::exp(x[j] - max_x);
    sum += y[j];
  }
  const T inv = T(1) / sum;
  for (int64_t j = 0; j < cols; ++j) y[j] *= inv;
}

template <class T>
void softmax_backward_row(const T* y, const T* dy, T* dx, int64_t cols) {
  T dot = 0;  // sum_i dy_i y_i
  for (int64_t j = 0; j < cols; ++j) dot += dy[j] * y[j];
  for (int64_t j = 0; j < cols; ++j) dx[j] = y[j] * (dy[j] - dot);
}

}  // namespace

// The fast versions split rows across threads; the row math is the reference's.
template <class T>
void softmax_forward(const T* x, T* y, int64_t rows, int64_t cols) {
  parallel_for(rows, [&](int64_t r) { softmax_row(x + r * cols, y + r * cols, cols); });
}
template <class T>
void softmax_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols) {
  parallel_for(rows, [&](int64_t r) {
    softmax_backward_row(y + r * cols, dy + r * cols, dx + r * cols, cols);
  });
}
template <class T>
void softmax_forward_ref(const T* x, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) softmax_row(x + r * cols, y + r * cols, cols);
}
template <class T>
void softmax_backward_ref(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    softmax_backward_row(y + r * cols, dy + r * cols, dx + r * cols, cols);
}

#define SL_INSTANTIATE(T)                                                         \
  template void softmax_forward<T>(const T*, T*, int64_t, int64_t);               \
  template void softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t);    \
  template void softmax_forward_ref<T>(const T*, T*, int64_t, int64_t);           \
  template void softmax_backward_ref<T>(const T*, const T*, T*, int64_t, int64_t);
SL_INSTANTIATE(float)
SL_INSTANTIATE(double)
#undef SL_INSTANTIATE

}  // namespace scalelab
