// kernels/rmsnorm: RMSNorm over the last axis (Zhang & Sennrich 2019; T5, LLaMA, Gemma).
//
//   forward:  rstd = 1/sqrt(mean(x²) + eps),  xhat = x rstd,  y = gamma * xhat
//   backward: dgamma += sum_rows dy * xhat,  g = dy * gamma,  dx = rstd (g - xhat mean(g * xhat))
// The forward saves rstd per row; the statistics are accumulated in double.
#pragma once
#include "scalelab/kernels/layernorm.hpp"

namespace scalelab {

template <class T>
void rmsnorm_forward(const NormShape& s, const T* x, const T* gamma, T* y, T* rstd);
// Accumulates dgamma (+=); overwrites dx.
template <class T>
void rmsnorm_backward(const NormShape& s, const T* dy, const T* x, const T* gamma, const T* rstd,
                      T* dx, T* dgamma);

template <class T>
void rmsnorm_forward_ref(const NormShape& s, const T* x, const T* gamma, T* y, T* rstd);
template <class T>
void rmsnorm_backward_ref(const NormShape& s, const T* dy, const T* x, const T* gamma,
                          const T* rstd, T* dx, T* dgamma);

}  // namespace scalelab
