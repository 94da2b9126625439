// The float LayerNorm rows (kernels/layernorm.hpp) for every Highway target, chosen at run time
// (kernels/simd_dispatch.hpp). The arithmetic is the plain twin's (layernorm.cpp's rows): sums in
// double, xhat = (x - mu) · rstd in double rounded to float, y = xhat · gamma + beta in float,
// no fused multiply-add; only the order of the double sums differs (lanes, then across lanes).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/layernorm_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/layernorm_simd.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Doubles, and floats of the same lane count (half a vector of floats) promoted to them.
using DD = hn::ScalableTag<double>;
using DF = hn::Rebind<float, DD>;

// Sum of x[0, cols) in double.
HWY_INLINE double SumRow(const float* HWY_RESTRICT x, int64_t cols) {
  const DD dd;
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dd));
  auto acc = hn::Zero(dd);
  int64_t j = 0;
  for (; j + lanes <= cols; j += lanes) acc = hn::Add(acc, hn::PromoteTo(dd, hn::LoadU(df, x + j)));
  double sum = hn::GetLane(hn::SumOfLanes(dd, acc));
  for (; j < cols; ++j) sum += x[j];
  return sum;
}

void LayerNormRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                  const float* HWY_RESTRICT beta, float* HWY_RESTRICT y, float* mean, float* rstd,
                  int64_t cols, double eps) {
  const DD dd;
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dd));
  const double mu = SumRow(x, cols) / cols;
  const auto vmu = hn::Set(dd, mu);
  auto acc = hn::Zero(dd);
  int64_t j = 0;
  for (; j + lanes <= cols; j += lanes) {
    const auto c = hn::Sub(hn::PromoteTo(dd, hn::LoadU(df, x + j)), vmu);
    acc = hn::Add(acc, hn::Mul(c, c));
  }
  double sum_sq = hn::GetLane(hn::SumOfLanes(dd, acc));
  for (; j < cols; ++j) sum_sq += (x[j] - mu) * (x[j] - mu);
  const double r = 1.0 / std::sqrt(sum_sq / cols + eps);
  const auto vr = hn::Set(dd, r);
  for (j = 0; j + lanes <= cols; j += lanes) {
    const auto xhat = hn::DemoteTo(df, hn::Mul(hn::Sub(hn::PromoteTo(dd, hn::LoadU(df, x + j)), vmu), vr));
    hn::StoreU(hn::Add(hn::Mul(xhat, hn::LoadU(df, gamma + j)), hn::LoadU(df, beta + j)), df, y + j);
  }
  for (; j < cols; ++j) y[j] = static_cast<float>((x[j] - mu) * r) * gamma[j] + beta[j];
  *mean = static_cast<float>(mu);
  *rstd = static_cast<float>(r);
}

void LayerNormBackwardRow(const float* HWY_RESTRICT dy, const float* HWY_RESTRICT x,
                          const float* HWY_RESTRICT gamma, float rstd_f, float* HWY_RESTRICT dx,
                          float* HWY_RESTRICT dgamma, float* HWY_RESTRICT dbeta, int64_t cols) {
  const DD dd;
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dd));
  const double mean = SumRow(x, cols) / cols;
  const double rstd = rstd_f;
  const auto vmean = hn::Set(dd, mean), vr = hn::Set(dd, rstd);
  auto acc_g = hn::Zero(dd), acc_gx = hn::Zero(dd);
  int64_t j = 0;
  for (; j + lanes <= cols; j += lanes) {
    const auto dyf = hn::LoadU(df, dy + j);
    const auto xhat = hn::Mul(hn::Sub(hn::PromoteTo(dd, hn::LoadU(df, x + j)), vmean), vr);
    const auto g = hn::Mul(hn::PromoteTo(dd, dyf), hn::PromoteTo(dd, hn::LoadU(df, gamma + j)));
    acc_g = hn::Add(acc_g, g);
    acc_gx = hn::Add(acc_gx, hn::Mul(g, xhat));
    hn::StoreU(hn::Add(hn::LoadU(df, dgamma + j), hn::Mul(dyf, hn::DemoteTo(df, xhat))), df, dgamma + j);
    hn::StoreU(hn::Add(hn::LoadU(df, dbeta + j), dyf), df, dbeta + j);
  }
  double mean_g = hn::GetLane(hn::SumOfLanes(dd, acc_g));
  double mean_g_xhat = hn::GetLane(hn::SumOfLanes(dd, acc_gx));
  for (; j < cols; ++j) {
    const double xhat = (x[j] - mean) * rstd;
    const double g = static_cast<double>(dy[j]) * gamma[j];
    mean_g += g;
    mean_g_xhat += g * xhat;
    dgamma[j] += dy[j] * static_cast<float>(xhat);
    dbeta[j] += dy[j];
  }
  mean_g /= cols;
  mean_g_xhat /= cols;
  const auto vmg = hn::Set(dd, mean_g), vmgx = hn::Set(dd, mean_g_xhat);
  for (j = 0; j + lanes <= cols; j += lanes) {
    const auto xhat = hn::Mul(hn::Sub(hn::PromoteTo(dd, hn::LoadU(df, x + j)), vmean), vr);
    const auto g = hn::Mul(hn::PromoteTo(dd, hn::LoadU(df, dy + j)), hn::PromoteTo(dd, hn::LoadU(df, gamma + j)));
    const auto d = hn::Mul(vr, hn::Sub(hn::Sub(g, vmg), hn::Mul(xhat, vmgx)));
    hn::StoreU(hn::DemoteTo(df, d), df, dx + j);
  }
  for (; j < cols; ++j) {
    const double xhat = (x[j] - mean) * rstd;
    const double g = static_cast<double>(dy[j]) * gamma[j];
    dx[j] = static_cast<float>(rstd * (g - mean_g - xhat * mean_g_xhat));
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(LayerNormRow);
HWY_EXPORT(LayerNormBackwardRow);

void layernorm_row_simd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                        float* rstd, int64_t cols, double eps) {
  HWY_DYNAMIC_DISPATCH(LayerNormRow)(x, gamma, beta, y, mean, rstd, cols, eps);
}

void layernorm_backward_row_simd(const float* dy, const float* x, const float* gamma, float rstd,
                                 float* dx, float* dgamma, float* dbeta, int64_t cols) {
  HWY_DYNAMIC_DISPATCH(LayerNormBackwardRow)(dy, x, gamma, rstd, dx, dgamma, dbeta, cols);
}
}  // namespace scalelab
#endif  // HWY_ONCE
