// kernels/softmax: row-wise softmax over the last axis, forward and backward.
//
//   forward:  y_j = exp(x_j - max x) / sum_i exp(x_i - max x)
//   backward: dx_j = y_j (dy_j - sum_i dy_i y_i)        (the Jacobian diag(y) - y yᵀ applied to dy)
// Entries equal to -inf (masked) get probability 0; a row that is all -inf gives all zeros.
#pragma once
#include <cstdint>

namespace scalelab {

template <class T>
void softmax_forward(const T* x, T* y, int64_t rows, int64_t cols);
template <class T>
void softmax_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols);

template <class T>
void softmax_forward_ref(const T* x, T* y, int64_t rows, int64_t cols);
template <class T>
void softmax_backward_ref(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols);

}  // namespace scalelab
