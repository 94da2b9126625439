// The FMA peak loop (simd_fma_peak.hpp), compiled for every Highway target.
#include <cstdint>
#include <string>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/simd_fma_peak.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/kernels/simd_fma_peak.hpp"

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

double FmaPeakRun(int64_t rounds) {
  const hn::ScalableTag<float> d;
  // acc = acc · m + a converges to a / (1 - m) = 1: no overflow, no subnormals.
  const auto m = hn::Set(d, 0.999f), a = hn::Set(d, 0.001f);
  auto c0 = hn::Set(d, 0.0f), c1 = hn::Set(d, 0.1f), c2 = hn::Set(d, 0.2f), c3 = hn::Set(d, 0.3f);
  auto c4 = hn::Set(d, 0.4f), c5 = hn::Set(d, 0.5f), c6 = hn::Set(d, 0.6f), c7 = hn::Set(d, 0.7f);
  auto c8 = hn::Set(d, 0.8f), c9 = hn::Set(d, 0.9f), c10 = hn::Set(d, 1.1f), c11 = hn::Set(d, 1.2f);
  for (int64_t r = 0; r < rounds; ++r) {
    c0 = hn::MulAdd(c0, m, a), c1 = hn::MulAdd(c1, m, a), c2 = hn::MulAdd(c2, m, a);
    c3 = hn::MulAdd(c3, m, a), c4 = hn::MulAdd(c4, m, a), c5 = hn::MulAdd(c5, m, a);
    c6 = hn::MulAdd(c6, m, a), c7 = hn::MulAdd(c7, m, a), c8 = hn::MulAdd(c8, m, a);
    c9 = hn::MulAdd(c9, m, a), c10 = hn::MulAdd(c10, m, a), c11 = hn::MulAdd(c11, m, a);
  }
  auto sum = hn::Add(hn::Add(hn::Add(c0, c1), hn::Add(c2, c3)), hn::Add(hn::Add(c4, c5), hn::Add(c6, c7)));
  sum = hn::Add(sum, hn::Add(hn::Add(c8, c9), hn::Add(c10, c11)));
  volatile float sink = hn::GetLane(hn::SumOfLanes(d, sum));
  (void)sink;
  return 2.0 * 12.0 * static_cast<double>(hn::Lanes(d)) * static_cast<double>(rounds);
}

int FmaLanes() { return static_cast<int>(hn::Lanes(hn::ScalableTag<float>())); }

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(FmaPeakRun);
HWY_EXPORT(FmaLanes);

double simd_fma_peak_run(int64_t rounds) {
  apply_simd_environment();
  return HWY_DYNAMIC_DISPATCH(FmaPeakRun)(rounds);
}
int simd_fma_peak_lanes() {
  apply_simd_environment();
  return HWY_DYNAMIC_DISPATCH(FmaLanes)();
}
}  // namespace scalelab
#endif
