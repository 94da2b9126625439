// kernels/dropout: the inverted-dropout mask from a counter-based hash, applied in place.
//
//   u_i   = mix(mix(lo32(key) + i) ^ hi32(key))   mix: a 32-bit avalanche hash (two multiplies,
//                                                  "lowbias32"), so u_i depends on (key, i) only
//   m_i   = 0 if u_i >> 1 < round(p · 2³¹), else 1 / (1 - p)   (P(drop) = p within 2⁻³¹)
//   x_i  *= m_i, mask_i = m_i
// Element i's mask does not depend on the thread count or on the SIMD width, so the fast kernel
// equals its plain twin bit for bit. n must be below 2³² (the counter is 32 bits).
#pragma once
#include <cstdint>

namespace scalelab {

template <class T>
void dropout_forward(uint64_t key, double p, T* x, T* mask, int64_t n);
template <class T>
void dropout_forward_ref(uint64_t key, double p, T* x, T* mask, int64_t n);
// dropout_forward, then out_i = residual_i + x_i in the same pass (a residual block's
// x + D(f(x)): one pass over the activations instead of two). out may not alias x or mask.
template <class T>
void dropout_forward_add(uint64_t key, double p, T* x, T* mask, const T* residual, T* out, int64_t n);
// out_i = residual_i + x_i: dropout_forward_add where dropout is the identity (not training, or
// p = 0), across the threads. out may alias residual or x.
template <class T>
void residual_add(const T* residual, const T* x, T* out, int64_t n);

}  // namespace scalelab
