// The GEMM epilogue's row passes (kernels/epilogue_rows.hpp) for every Highway target, chosen at
// run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/epilogue_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/epilogue_rows.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void ReluRows(float* HWY_RESTRICT c, int64_t m, int64_t n, int64_t ldc) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  for (int64_t i = 0; i < m; ++i) {
    float* HWY_RESTRICT row = c + i * ldc;
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes) {
      const auto v = hn::LoadU(d, row + j);
      hn::StoreU(hn::IfThenZeroElse(hn::Lt(v, zero), v), d, row + j);  // NaN < 0 is false: kept
    }
    for (; j < n; ++j) row[j] = row[j] < 0.0f ? 0.0f : row[j];
  }
}

void MaskRows(float* HWY_RESTRICT c, const float* HWY_RESTRICT a, int64_t m, int64_t n, int64_t ldc) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  for (int64_t i = 0; i < m; ++i) {
    float* HWY_RESTRICT row = c + i * ldc;
    const float* HWY_RESTRICT keep = a + i * n;
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes) {
      const auto v = hn::LoadU(d, row + j);
      hn::StoreU(hn::IfThenElseZero(hn::Gt(hn::LoadU(d, keep + j), zero), v), d, row + j);
    }
    for (; j < n; ++j) row[j] = keep[j] > 0.0f ? row[j] : 0.0f;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(ReluRows);
HWY_EXPORT(MaskRows);

void relu_rows(float* c, int64_t m, int64_t n, int64_t ldc) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(ReluRows)(c, m, n, ldc);
}

void mask_rows(float* c, const float* a, int64_t m, int64_t n, int64_t ldc) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(MaskRows)(c, a, m, n, ldc);
}
}  // namespace scalelab
#endif  // HWY_ONCE
