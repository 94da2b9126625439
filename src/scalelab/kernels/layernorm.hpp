// kernels/layernorm: LayerNorm over the last axis, forward and backward.
//
//   forward:  mu = mean(x), rstd = 1/sqrt(var(x) + eps) (biased variance),
//             xhat = (x - mu) rstd,  y = gamma * xhat + beta
//   backward: dgamma += sum_rows dy * xhat,  dbeta += sum_rows dy,
//             g = dy * gamma,  dx = rstd (g - mean(g) - xhat mean(g * xhat))
// The forward saves mean and rstd per row (the backward recomputes xhat from x).
#pragma once
#include <cstdint>

namespace scalelab {

struct NormShape {
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
};

template <class T>
void layernorm_forward(const NormShape& s, const T* x, const T* gamma, const T* beta, T* y, T* mean,
                       T* rstd);
// Accumulates into dgamma and dbeta (+=); overwrites dx.
template <class T>
void layernorm_backward(const NormShape& s, const T* dy, const T* x, const T* gamma, const T* mean,
                        const T* rstd, T* dx, T* dgamma, T* dbeta);

template <class T>
void layernorm_forward_ref(const NormShape& s, const T* x, const T* gamma, const T* beta, T* y,
                           T* mean, T* rstd);
template <class T>
void layernorm_backward_ref(const NormShape& s, const T* dy, const T* x, const T* gamma,
                            const T* mean, const T* rstd, T* dx, T* dgamma, T* dbeta);

}  // namespace scalelab
