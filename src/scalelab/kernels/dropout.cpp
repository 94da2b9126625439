// The dropout mask (kernels/dropout.hpp) for every Highway target, float only; double and the twin
// run the scalar loop with the same integer arithmetic.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/dropout.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/dropout.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#ifndef SCALELAB_DROPOUT_SCALAR_ONCE
#define SCALELAB_DROPOUT_SCALAR_ONCE
namespace scalelab::dropout_scalar {
// "lowbias32" (C. Wellons' hash prospector): a bijection of 32-bit words with strong avalanche.
inline uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}
inline uint32_t draw(uint64_t key, uint32_t i) {
  return mix(mix(static_cast<uint32_t>(key) + i) ^ static_cast<uint32_t>(key >> 32));
}
inline int32_t drop_below(double p) { return static_cast<int32_t>(std::llround(p * 0x1.0p31)); }

// x_i *= m_i, mask_i = m_i, and with a residual: out_i = residual_i + x_i.
template <class T>
void run(uint64_t key, double p, T* x, T* mask, int64_t begin, int64_t end,
         const T* residual = nullptr, T* out = nullptr) {
  const int32_t below = drop_below(p);
  const T keep = T(1) / T(1 - p);
  for (int64_t i = begin; i < end; ++i) {
    const auto u = static_cast<int32_t>(draw(key, static_cast<uint32_t>(i)) >> 1);
    mask[i] = u < below ? T(0) : keep;
    x[i] *= mask[i];
    if (residual) out[i] = residual[i] + x[i];
  }
}
}  // namespace scalelab::dropout_scalar
#endif

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class DU, class V>
HWY_INLINE V Mix(DU du, V x) {
  x = hn::Xor(x, hn::ShiftRight<16>(x));
  x = hn::Mul(x, hn::Set(du, 0x7FEB352Du));
  x = hn::Xor(x, hn::ShiftRight<15>(x));
  x = hn::Mul(x, hn::Set(du, 0x846CA68Bu));
  return hn::Xor(x, hn::ShiftRight<16>(x));
}

template <bool kAddResidual>
HWY_INLINE void DropoutLoop(uint64_t key, double p, float* HWY_RESTRICT x, float* HWY_RESTRICT mask,
                            int64_t begin, int64_t end, const float* HWY_RESTRICT residual,
                            float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto key_lo = hn::Set(du, static_cast<uint32_t>(key));
  const auto key_hi = hn::Set(du, static_cast<uint32_t>(key >> 32));
  const auto below = hn::Set(di, dropout_scalar::drop_below(p));
  const auto keep = hn::Set(df, 1.0f / static_cast<float>(1 - p));
  const auto lane_index = hn::Iota(du, 0);
  int64_t i = begin;
  for (; i + lanes <= end; i += lanes) {
    const auto counter = hn::Add(hn::Set(du, static_cast<uint32_t>(i)), lane_index);
    const auto u = Mix(du, hn::Xor(Mix(du, hn::Add(key_lo, counter)), key_hi));
    const auto dropped = hn::RebindMask(df, hn::Lt(hn::BitCast(di, hn::ShiftRight<1>(u)), below));
    const auto m = hn::IfThenZeroElse(dropped, keep);
    hn::StoreU(m, df, mask + i);
    const auto y = hn::Mul(hn::LoadU(df, x + i), m);
    hn::StoreU(y, df, x + i);
    if constexpr (kAddResidual) hn::StoreU(hn::Add(hn::LoadU(df, residual + i), y), df, out + i);
  }
  dropout_scalar::run(key, p, x, mask, i, end, residual, out);
}

void DropoutRange(uint64_t key, double p, float* HWY_RESTRICT x, float* HWY_RESTRICT mask,
                  int64_t begin, int64_t end) {
  DropoutLoop<false>(key, p, x, mask, begin, end, nullptr, nullptr);
}

void DropoutAddRange(uint64_t key, double p, float* HWY_RESTRICT x, float* HWY_RESTRICT mask,
                     int64_t begin, int64_t end, const float* HWY_RESTRICT residual,
                     float* HWY_RESTRICT out) {
  DropoutLoop<true>(key, p, x, mask, begin, end, residual, out);
}

// out = residual + x over [begin, end): the identity case of DropoutAddRange.
void ResidualAddRange(const float* residual, const float* x,
                      float* out, int64_t begin, int64_t end) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = begin;
  for (; i + lanes <= end; i += lanes)
    hn::StoreU(hn::Add(hn::LoadU(df, residual + i), hn::LoadU(df, x + i)), df, out + i);
  for (; i < end; ++i) out[i] = residual[i] + x[i];
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(DropoutRange);
HWY_EXPORT(DropoutAddRange);
HWY_EXPORT(ResidualAddRange);

template <class T>
void dropout_forward(uint64_t key, double p, T* x, T* mask, int64_t n) {
  SL_CHECK(n < (int64_t(1) << 32), "dropout over ", n, " elements: at most 2^32 - 1 (a 32-bit counter)");
  constexpr int64_t kChunk = 8192;  // elements per parallel task
  if constexpr (std::is_same_v<T, float>) apply_simd_environment();
  parallel_for((n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
    if constexpr (std::is_same_v<T, float>)
      HWY_DYNAMIC_DISPATCH(DropoutRange)(key, p, x, mask, begin, end);
    else
      dropout_scalar::run(key, p, x, mask, begin, end);
  });
}

template <class T>
void dropout_forward_add(uint64_t key, double p, T* x, T* mask, const T* residual, T* out, int64_t n) {
  SL_CHECK(n < (int64_t(1) << 32), "dropout over ", n, " elements: at most 2^32 - 1 (a 32-bit counter)");
  constexpr int64_t kChunk = 8192;
  if constexpr (std::is_same_v<T, float>) apply_simd_environment();
  parallel_for((n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
    if constexpr (std::is_same_v<T, float>)
      HWY_DYNAMIC_DISPATCH(DropoutAddRange)(key, p, x, mask, begin, end, residual, out);
    else
      dropout_scalar::run(key, p, x, mask, begin, end, residual, out);
  });
}

template <class T>
void residual_add(const T* residual, const T* x, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) apply_simd_environment();
  parallel_elements(n, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, float>) {
      HWY_DYNAMIC_DISPATCH(ResidualAddRange)(residual, x, out, begin, end);
    } else {
      for (int64_t i = begin; i < end; ++i) out[i] = residual[i] + x[i];
    }
  });
}

template <class T>
void dropout_forward_ref(uint64_t key, double p, T* x, T* mask, int64_t n) {
  SL_CHECK(n < (int64_t(1) << 32), "dropout over ", n, " elements: at most 2^32 - 1 (a 32-bit counter)");
  dropout_scalar::run(key, p, x, mask, 0, n);
}

template void dropout_forward<float>(uint64_t, double, float*, float*, int64_t);
template void dropout_forward<double>(uint64_t, double, double*, double*, int64_t);
template void dropout_forward_ref<float>(uint64_t, double, float*, float*, int64_t);
template void dropout_forward_ref<double>(uint64_t, double, double*, double*, int64_t);
template void dropout_forward_add<float>(uint64_t, double, float*, float*, const float*, float*, int64_t);
template void dropout_forward_add<double>(uint64_t, double, double*, double*, const double*, double*,
                                          int64_t);
template void residual_add<float>(const float*, const float*, float*, int64_t);
template void residual_add<double>(const double*, const double*, double*, int64_t);
}  // namespace scalelab
#endif  // HWY_ONCE
