// One row of label-smoothed cross-entropy (kernels/cross_entropy_row.hpp): the plain twin, and the
// float kernel for every Highway target. The float kernel reads half a vector of floats at a time,
// promoted to a vector of doubles (as kernels/layernorm_simd.cpp does), keeps e_j in a per-thread
// buffer of doubles between the sums and the gradient (one exponential per logit), and writes dz
// with q_j = e / V everywhere, then the target's entry alone.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scalelab/kernels/cross_entropy_row.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "scalelab/kernels/cross_entropy_row.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#include <cmath>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DD = hn::ScalableTag<double>;
using DF = hn::Rebind<float, DD>;  // as many floats as DD has doubles
using DFull = hn::ScalableTag<float>;

// The first index of the largest of z[0 : n], as the twin's scan finds it when z holds no NaN; -1
// when the vector maximum matches no entry (a NaN: then the caller runs the twin).
int64_t FirstMaxIndex(const float* HWY_RESTRICT z, int64_t n, float* max_out) {
  const DFull d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  auto vmax = hn::Set(d, z[0]);
  int64_t j = 0;
  for (; j + L <= n; j += L) vmax = hn::Max(vmax, hn::LoadU(d, z + j));
  float m = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (; j < n; ++j) m = z[j] > m ? z[j] : m;
  *max_out = m;
  for (j = 0; j < n; ++j)
    if (z[j] == m) return j;
  return -1;
}

CrossEntropyRow CrossEntropyRowF32(const float* HWY_RESTRICT z, int64_t vocab, int32_t target,
                                   double smoothing, double grad_scale, float* HWY_RESTRICT dz) {
  float m_f;
  const int64_t argmax = FirstMaxIndex(z, vocab, &m_f);
  if (argmax < 0) return cross_entropy_row_plain(z, vocab, target, smoothing, grad_scale, dz);
  const DD dd;
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd));
  thread_local std::vector<double> e_buf;
  e_buf.resize(static_cast<size_t>(vocab));
  double* HWY_RESTRICT e = e_buf.data();
  const double m = z[argmax];  // = m_f (but -0 where the first largest entry is -0, as the twin)
  const auto vm = hn::Set(dd, m);
  auto vsum = hn::Zero(dd), vsum_z = hn::Zero(dd);
  int64_t j = 0;
  for (; j + L <= vocab; j += L) {  // e_j = exp(z_j - m)
    const auto zj = hn::PromoteTo(dd, hn::LoadU(df, z + j));
    const auto ej = hn::Exp(dd, hn::Sub(zj, vm));
    hn::StoreU(ej, dd, e + j);
    vsum = hn::Add(vsum, ej);
    vsum_z = hn::Add(vsum_z, zj);
  }
  double sum = hn::GetLane(hn::SumOfLanes(dd, vsum));
  double sum_z = hn::GetLane(hn::SumOfLanes(dd, vsum_z));
  for (; j < vocab; ++j) {
    e[j] = std::exp(double(z[j]) - m);
    sum += e[j];
    sum_z += z[j];
  }
  // A NaN among the logits (sum_z is NaN then): the twin's scan decides the argmax.
  if (std::isnan(sum_z)) return cross_entropy_row_plain(z, vocab, target, smoothing, grad_scale, dz);
  CrossEntropyRow row{.log_norm = m + std::log(sum), .sum_z = sum_z, .argmax = argmax};
  if (!dz) return row;
  const double inv_sum = 1.0 / sum, q_rest = smoothing / double(vocab);
  const auto v_inv_sum = hn::Set(dd, inv_sum), v_q = hn::Set(dd, q_rest);
  const auto v_scale = hn::Set(dd, grad_scale);
  for (j = 0; j + L <= vocab; j += L) {  // dz_j = (p_j - q_j) · grad_scale, p_j = e_j / S
    const auto p = hn::Mul(hn::LoadU(dd, e + j), v_inv_sum);
    hn::StoreU(hn::DemoteTo(df, hn::Mul(hn::Sub(p, v_q), v_scale)), df, dz + j);
  }
  for (; j < vocab; ++j) dz[j] = static_cast<float>((e[j] * inv_sum - q_rest) * grad_scale);
  const double q_target = (1 - smoothing) + q_rest;
  dz[target] = static_cast<float>((e[target] * inv_sum - q_target) * grad_scale);
  return row;
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace scalelab {
HWY_EXPORT(CrossEntropyRowF32);

template <class T>
CrossEntropyRow cross_entropy_row_plain(const T* z, int64_t vocab, int32_t target,
                                        double smoothing, double grad_scale, T* dz) {
  int64_t argmax = 0;
  for (int64_t j = 1; j < vocab; ++j) argmax = z[j] > z[argmax] ? j : argmax;
  thread_local std::vector<double> e;  // e_j = exp(z_j - max z), kept for the gradient
  e.resize(static_cast<size_t>(vocab));
  double sum = 0, sum_z = 0;
  for (int64_t j = 0; j < vocab; ++j) {
    e[j] = std::exp(double(z[j]) - double(z[argmax]));
    sum += e[j];
    sum_z += z[j];
  }
  const CrossEntropyRow row{
      .log_norm = double(z[argmax]) + std::log(sum), .sum_z = sum_z, .argmax = argmax};
  if (dz) {
    const double inv_sum = 1.0 / sum;
    for (int64_t j = 0; j < vocab; ++j) {
      const double p = e[j] * inv_sum;  // = exp(z_j - log_norm)
      const double q = (j == target ? 1 - smoothing : 0.0) + smoothing / double(vocab);
      dz[j] = static_cast<T>((p - q) * grad_scale);
    }
  }
  return row;
}

CrossEntropyRow cross_entropy_row(const float* z, int64_t vocab, int32_t target, double smoothing,
                                  double grad_scale, float* dz) {
  apply_simd_environment();
  return HWY_DYNAMIC_DISPATCH(CrossEntropyRowF32)(z, vocab, target, smoothing, grad_scale, dz);
}

CrossEntropyRow cross_entropy_row(const double* z, int64_t vocab, int32_t target, double smoothing,
                                  double grad_scale, double* dz) {
  return cross_entropy_row_plain(z, vocab, target, smoothing, grad_scale, dz);
}

template CrossEntropyRow cross_entropy_row_plain<float>(const float*, int64_t, int32_t, double,
                                                        double, float*);
template CrossEntropyRow cross_entropy_row_plain<double>(const double*, int64_t, int32_t, double,
                                                         double, double*);

}  // namespace scalelab
#endif  // HWY_ONCE
