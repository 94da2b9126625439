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

// On bf16 bits read as int16: negative numbers (sign set, magnitude 1 .. 0x7F80) are -32767 ..
// -128; -0 is -32768 and negative NaNs -127 .. -1. Positive numbers (1 .. 0x7F80) are 1 .. 32640.
void ReluBf16Rows(uint16_t* HWY_RESTRICT c, int64_t m, int64_t n, int64_t ldc) {
  const hn::ScalableTag<int16_t> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto above = hn::Set(d, int16_t(-32768)), below = hn::Set(d, int16_t(-127));
  for (int64_t i = 0; i < m; ++i) {
    int16_t* HWY_RESTRICT row = reinterpret_cast<int16_t*>(c + i * ldc);
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes) {
      const auto v = hn::LoadU(d, row + j);
      hn::StoreU(hn::IfThenZeroElse(hn::And(hn::Gt(v, above), hn::Lt(v, below)), v), d, row + j);
    }
    for (; j < n; ++j) row[j] = row[j] > -32768 && row[j] < -127 ? int16_t(0) : row[j];
  }
}

void MaskBf16Rows(uint16_t* HWY_RESTRICT c, const uint16_t* HWY_RESTRICT a, int64_t m, int64_t n,
                  int64_t ldc) {
  const hn::ScalableTag<int16_t> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d), beyond = hn::Set(d, int16_t(32641));
  for (int64_t i = 0; i < m; ++i) {
    int16_t* HWY_RESTRICT row = reinterpret_cast<int16_t*>(c + i * ldc);
    const int16_t* HWY_RESTRICT keep = reinterpret_cast<const int16_t*>(a + i * n);
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes) {
      const auto k = hn::LoadU(d, keep + j);
      hn::StoreU(hn::IfThenElseZero(hn::And(hn::Gt(k, zero), hn::Lt(k, beyond)), hn::LoadU(d, row + j)),
                 d, row + j);
    }
    for (; j < n; ++j) row[j] = keep[j] > 0 && keep[j] < 32641 ? row[j] : int16_t(0);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(ReluRows);
HWY_EXPORT(MaskRows);
HWY_EXPORT(ReluBf16Rows);
HWY_EXPORT(MaskBf16Rows);

void relu_rows(float* c, int64_t m, int64_t n, int64_t ldc, uint16_t* bf16_out) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(ReluRows)(c, m, n, ldc, bf16_out);
}

void mask_rows(float* c, const float* a, int64_t m, int64_t n, int64_t ldc, uint16_t* bf16_out) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(MaskRows)(c, a, m, n, ldc, bf16_out);
}
void relu_bf16_rows(uint16_t* c, int64_t m, int64_t n, int64_t ldc) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(ReluBf16Rows)(c, m, n, ldc);
}

void mask_bf16_rows(uint16_t* c, const uint16_t* a, int64_t m, int64_t n, int64_t ldc) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(MaskBf16Rows)(c, a, m, n, ldc);
}

void relu_bf16_rows_plain(uint16_t* c, int64_t m, int64_t n, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint16_t& out = c[i * ldc + j];
      if (bf16_bits_to_f32(out) < 0.0f) out = 0;  // NaN and -0 kept
    }
}

void mask_bf16_rows_plain(uint16_t* c, const uint16_t* a, int64_t m, int64_t n, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (!(bf16_bits_to_f32(a[i * n + j]) > 0.0f)) c[i * ldc + j] = 0;
}
}  // namespace scalelab
#endif  // HWY_ONCE
