// The GEMM epilogue's row passes (kernels/epilogue_rows.hpp) for every Highway target, chosen at
// run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/epilogue_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/bf16_round-inl.hpp"
#include "scalelab/kernels/epilogue_rows.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void ReluRows(float* HWY_RESTRICT c, int64_t m, int64_t n, int64_t ldc, uint16_t* HWY_RESTRICT bf16_out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  for (int64_t i = 0; i < m; ++i) {
    float* HWY_RESTRICT row = c + i * ldc;
    uint16_t* HWY_RESTRICT bits = bf16_out ? bf16_out + i * n : nullptr;
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes) {
      const auto v = hn::LoadU(d, row + j);
      const auto y = hn::IfThenZeroElse(hn::Lt(v, zero), v);  // NaN < 0 is false: kept
      hn::StoreU(y, d, row + j);
      if (bits) StoreBf16Bits(d, y, bits + j);
    }
    for (; j < n; ++j) {
      row[j] = row[j] < 0.0f ? 0.0f : row[j];
      if (bits) bits[j] = f32_to_bf16_bits(row[j]);
    }
  }
}

void MaskRows(float* HWY_RESTRICT c, const float* HWY_RESTRICT a, int64_t m, int64_t n, int64_t ldc,
              uint16_t* HWY_RESTRICT bf16_out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  for (int64_t i = 0; i < m; ++i) {
    float* HWY_RESTRICT row = c + i * ldc;
    const float* HWY_RESTRICT keep = a + i * n;
    uint16_t* HWY_RESTRICT bits = bf16_out ? bf16_out + i * n : nullptr;
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes) {
      const auto y = hn::IfThenElseZero(hn::Gt(hn::LoadU(d, keep + j), zero), hn::LoadU(d, row + j));
      hn::StoreU(y, d, row + j);
      if (bits) StoreBf16Bits(d, y, bits + j);
    }
    for (; j < n; ++j) {
      row[j] = keep[j] > 0.0f ? row[j] : 0.0f;
      if (bits) bits[j] = f32_to_bf16_bits(row[j]);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(ReluRows);
HWY_EXPORT(MaskRows);

void relu_rows(float* c, int64_t m, int64_t n, int64_t ldc, uint16_t* bf16_out) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(ReluRows)(c, m, n, ldc, bf16_out);
}

void mask_rows(float* c, const float* a, int64_t m, int64_t n, int64_t ldc, uint16_t* bf16_out) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(MaskRows)(c, a, m, n, ldc, bf16_out);
}
}  // namespace scalelab
#endif  // HWY_ONCE
