// kernels/activation: element-wise ReLU and GELU (exact, erf form, as torch.nn.GELU()).
//
//   relu:  y = max(x, 0),                 dx = dy * [x > 0]
//   gelu:  y = x Phi(x) = x/2 (1 + erf(x/sqrt 2)),
//          dx = dy (Phi(x) + x phi(x)),   phi(x) = exp(-x²/2)/sqrt(2 pi)
#pragma once
#include <cstdint>

namespace scalelab {

enum class Activation { relu, gelu };

template <class T>
void activation_forward(Activation act, const T* x, T* y, int64_t n);
// dx = dy * act'(x); x is the forward's input.
template <class T>
void activation_backward(Activation act, const T* x, const T* dy, T* dx, int64_t n);

template <class T>
void activation_forward_ref(Activation act, const T* x, T* y, int64_t n);
template <class T>
void activation_backward_ref(Activation act, const T* x, const T* dy, T* dx, int64_t n);

}  // namespace scalelab
