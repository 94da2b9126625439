// The float LayerNorm rows (kernels/layernorm.hpp) for every Highway target, chosen at run time
// (kernels/simd_dispatch.hpp). The arithmetic follows the plain twin (layernorm.cpp's rows): sums in
// double, xhat = (x - mu) · rstd in double rounded to float, y = xhat · gamma + beta in float; but
// each row takes two passes instead of three: the variance from sum x and sum x² in one pass, and
// the backward's mean(g · xhat) from sum g · x (see the rows below), so the double sums differ from
// the twin's beyond their order (relative ~1e-16 · (mean/std)²; the tests' large-mean rows bound
// it). On targets with FMA the compiler fuses a product with the add after it (y, the sums of
// squares and products, dgamma), one rounding where the twin has two: within the tests' ulp bounds.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/layernorm_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "scalelab/kernels/layernorm_simd.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#include <algorithm>
#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Doubles, and floats of the same lane count (half a vector of floats) promoted to them.
using DD = hn::ScalableTag<double>;
using DF = hn::Rebind<float, DD>;

constexpr int64_t kKept = 256;  // columns whose promoted x and g a backward row keeps between passes

void LayerNormRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                  const float* HWY_RESTRICT beta, float* HWY_RESTRICT y, float* mean, float* rstd,
                  int64_t cols, double eps) {
  const DD dd;
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dd));
  // One pass for sum x and sum x² (each x² is exact in double, the sums good to ~1e-16 of
  // sum x², so the variance keeps ~1e-16 · (mean/std)² relative error: nothing at float
  // precision), then one pass for y. The twin takes a second pass for sum (x - mu)².
  auto acc = hn::Zero(dd), acc_sq = hn::Zero(dd);
  int64_t j = 0;
  for (; j + lanes <= cols; j += lanes) {
    const auto xd = hn::PromoteTo(dd, hn::LoadU(df, x + j));
    acc = hn::Add(acc, xd);
    acc_sq = hn::Add(acc_sq, hn::Mul(xd, xd));
  }
  double sum = hn::GetLane(hn::SumOfLanes(dd, acc));
  double sum_sq = hn::GetLane(hn::SumOfLanes(dd, acc_sq));
  for (; j < cols; ++j) sum += x[j], sum_sq += double(x[j]) * x[j];
  const double mu = sum / cols;
  const double var = std::max(0.0, sum_sq / cols - mu * mu);
  const double r = 1.0 / std::sqrt(var + eps);
  const auto vmu = hn::Set(dd, mu), vr = hn::Set(dd, r);
  for (j = 0; j + lanes <= cols; j += lanes) {
    const auto xhat = hn::DemoteTo(df, hn::Mul(hn::Sub(hn::PromoteTo(dd, hn::LoadU(df, x + j)), vmu), vr));
    hn::StoreU(hn::Add(hn::Mul(xhat, hn::LoadU(df, gamma + j)), hn::LoadU(df, beta + j)), df, y + j);
  }
  for (; j < cols; ++j) y[j] = static_cast<float>((x[j] - mu) * r) * gamma[j] + beta[j];
  *mean = static_cast<float>(mu);
  *rstd = static_cast<float>(r);
}

// Two passes: sum x, sum g and sum g·x (g = dy · gamma) with dbeta; then dx and dgamma, where
//   mean(g · xhat) = rstd · (mean(g · x) - mu · mean(g))      (xhat = (x - mu) · rstd)
// (the twin takes a first pass for mu and computes mean(g · xhat) from xhat directly).
void LayerNormBackwardRow(const float* HWY_RESTRICT dy, const float* HWY_RESTRICT x,
                          const float* HWY_RESTRICT gamma, float rstd_f, float* HWY_RESTRICT dx,
                          float* HWY_RESTRICT dgamma, float* HWY_RESTRICT dbeta, int64_t cols) {
  const DD dd;
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dd));
  const double rstd = rstd_f;
  // A row of up to kKept columns keeps its promoted x and g for the second pass (the same values:
  // promotion is exact), instead of loading and promoting x, dy and gamma again.
  HWY_ALIGN double x_kept[kKept], g_kept[kKept];
  const bool keep = cols <= kKept;
  auto acc_x = hn::Zero(dd), acc_g = hn::Zero(dd), acc_gx = hn::Zero(dd);
  int64_t j = 0;
  for (; j + lanes <= cols; j += lanes) {
    const auto dyf = hn::LoadU(df, dy + j);
    const auto xd = hn::PromoteTo(dd, hn::LoadU(df, x + j));
    const auto g = hn::Mul(hn::PromoteTo(dd, dyf), hn::PromoteTo(dd, hn::LoadU(df, gamma + j)));
    if (keep) hn::Store(xd, dd, x_kept + j), hn::Store(g, dd, g_kept + j);
    acc_x = hn::Add(acc_x, xd);
    acc_g = hn::Add(acc_g, g);
    acc_gx = hn::Add(acc_gx, hn::Mul(g, xd));
    hn::StoreU(hn::Add(hn::LoadU(df, dbeta + j), dyf), df, dbeta + j);
  }
  double sum_x = hn::GetLane(hn::SumOfLanes(dd, acc_x));
  double sum_g = hn::GetLane(hn::SumOfLanes(dd, acc_g));
  double sum_gx = hn::GetLane(hn::SumOfLanes(dd, acc_gx));
  for (; j < cols; ++j) {
    const double g = static_cast<double>(dy[j]) * gamma[j];
    sum_x += x[j];
    sum_g += g;
    sum_gx += g * x[j];
    dbeta[j] += dy[j];
  }
  const double mean = sum_x / cols;
  const double mean_g = sum_g / cols;
  const double mean_g_xhat = rstd * (sum_gx / cols - mean * mean_g);
  const auto vmean = hn::Set(dd, mean), vr = hn::Set(dd, rstd);
  const auto vmg = hn::Set(dd, mean_g), vmgx = hn::Set(dd, mean_g_xhat);
  for (j = 0; j + lanes <= cols; j += lanes) {
    const auto dyf = hn::LoadU(df, dy + j);
    const auto xd = keep ? hn::Load(dd, x_kept + j) : hn::PromoteTo(dd, hn::LoadU(df, x + j));
    const auto xhat = hn::Mul(hn::Sub(xd, vmean), vr);
    const auto g = keep ? hn::Load(dd, g_kept + j)
                        : hn::Mul(hn::PromoteTo(dd, dyf), hn::PromoteTo(dd, hn::LoadU(df, gamma + j)));
    const auto d = hn::Mul(vr, hn::Sub(hn::Sub(g, vmg), hn::Mul(xhat, vmgx)));
    hn::StoreU(hn::DemoteTo(df, d), df, dx + j);
    hn::StoreU(hn::Add(hn::LoadU(df, dgamma + j), hn::Mul(dyf, hn::DemoteTo(df, xhat))), df, dgamma + j);
  }
  for (; j < cols; ++j) {
    const double xhat = (x[j] - mean) * rstd;
    const double g = static_cast<double>(dy[j]) * gamma[j];
    dx[j] = static_cast<float>(rstd * (g - mean_g - xhat * mean_g_xhat));
    dgamma[j] += dy[j] * static_cast<float>(xhat);
  }
}


void LayerNormRows(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                   float* rstd, int64_t rows, int64_t cols, double eps) {
  for (int64_t r = 0; r < rows; ++r)
    LayerNormRow(x + r * cols, gamma, beta, y + r * cols, mean + r, rstd + r, cols, eps);
}

void LayerNormBackwardRows(const float* dy, const float* x, const float* gamma, const float* rstd,
                           float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    LayerNormBackwardRow(dy + r * cols, x + r * cols, gamma, rstd[r], dx + r * cols, dgamma, dbeta,
                         cols);
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(LayerNormRows);
HWY_EXPORT(LayerNormBackwardRows);

void layernorm_rows_simd(const float* x, const float* gamma, const float* beta, float* y,
                         float* mean, float* rstd, int64_t rows, int64_t cols, double eps) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(LayerNormRows)(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

void layernorm_backward_rows_simd(const float* dy, const float* x, const float* gamma,
                                  const float* rstd, float* dx, float* dgamma, float* dbeta,
                                  int64_t rows, int64_t cols) {
  apply_simd_environment();
  HWY_DYNAMIC_DISPATCH(LayerNormBackwardRows)(dy, x, gamma, rstd, dx, dgamma, dbeta, rows, cols);
}
}  // namespace scalelab
#endif  // HWY_ONCE
