// The float -> bf16 row conversion for every Highway target, chosen at run time
// (HWY_DYNAMIC_DISPATCH). Math and twin: bf16_convert.hpp. (Highway 1.0's own DemoteTo to
// bfloat16 truncates, so the rounding is written out: bf16_round-inl.hpp.)
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/bf16_convert.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/bf16_convert.hpp"
#include "scalelab/kernels/bf16_round-inl.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#ifndef SCALELAB_BF16_SCALAR_ONCE
#define SCALELAB_BF16_SCALAR_ONCE
namespace scalelab::bf16_scalar {
// One element: the same arithmetic as the vector body (for the tails).
inline uint16_t bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7FC0u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
}  // namespace scalelab::bf16_scalar
#endif

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void ToBf16Row(const float* HWY_RESTRICT x, int64_t n, uint16_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) StoreBf16Bits(df, hn::LoadU(df, x + i), out + i);
  for (; i < n; ++i) out[i] = bf16_scalar::bf16_bits(x[i]);
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(ToBf16Row);

void f32_to_bf16_row(const float* x, int64_t n, uint16_t* out) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(ToBf16Row)(x, n, out);
}

void round_row_to_bf16(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(bf16_scalar::bf16_bits(x[i])) << 16;
    std::memcpy(&out[i], &u, 4);
  }
}

}  // namespace scalelab
#endif  // HWY_ONCE
