#include "scalelab/probes/softmax_stats.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"

namespace scalelab::probes {

SoftmaxRow softmax_row_from_probs(const double* p, int64_t n) {
  SL_CHECK(n >= 1, "softmax row: n = ", n, " visible keys, need at least 1");
  SoftmaxRow r;
  r.n = n;
  double s2 = 0.0, s3 = 0.0, h = 0.0, mx = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    const double pj = p[j];
    if (pj > 0.0) h -= pj * std::log(pj);
    const double q2 = pj * pj;
    s2 += q2;
    s3 += q2 * pj;
    mx = std::max(mx, pj);
  }
  r.entropy = h;
  r.normalized_entropy = n >= 2 ? h / std::log(static_cast<double>(n)) : RunningMoments::nan();
  r.max_p = mx;
  // ||diag(p) - p pᵀ||_F² = sum_j (p_j - p_j²)² + sum_{j≠k} p_j² p_k²
  //                       = sum p² - 2 sum p³ + (sum p²)²;  clamp rounding below 0.
  r.jacobian_fro = std::sqrt(std::max(0.0, s2 - 2.0 * s3 + s2 * s2));
  return r;
}

SoftmaxRow softmax_row_from_logits(const double* s, int64_t n, std::vector<double>& scratch) {
  SL_CHECK(n >= 1, "softmax row: n = ", n, " visible keys, need at least 1");
  scratch.resize(n);
  double m = s[0];
  for (int64_t j = 1; j < n; ++j) m = std::max(m, s[j]);
  double z = 0.0;
  for (int64_t j = 0; j < n; ++j) z += (scratch[j] = std::exp(s[j] - m));
  for (int64_t j = 0; j < n; ++j) scratch[j] /= z;
  return softmax_row_from_probs(scratch.data(), n);
}

void SoftmaxAccumulator::add(const SoftmaxRow& row) {
  ++rows;
  if (row.n < 2) {
    ++single_key_rows;
    return;
  }
  if (row.max_p > thresholds.saturated) ++saturated_rows;
  entropy.add(row.entropy);
  max_p.add(row.max_p);
  jacobian_fro.add(row.jacobian_fro);
  normalized_entropy.add(row.normalized_entropy);
  if (row.normalized_entropy >= thresholds.near_uniform) ++near_uniform_rows;
  if (entropy_histogram) entropy_histogram->add(row.normalized_entropy);
}

void SoftmaxAccumulator::merge(const SoftmaxAccumulator& o) {
  SL_CHECK(thresholds.saturated == o.thresholds.saturated &&
               thresholds.near_uniform == o.thresholds.near_uniform,
           "softmax probes: cannot merge totals with different thresholds");
  rows += o.rows;
  single_key_rows += o.single_key_rows;
  saturated_rows += o.saturated_rows;
  near_uniform_rows += o.near_uniform_rows;
  normalized_entropy.merge(o.normalized_entropy);
  entropy.merge(o.entropy);
  max_p.merge(o.max_p);
  jacobian_fro.merge(o.jacobian_fro);
  if (o.entropy_histogram) {
    if (entropy_histogram) entropy_histogram->merge(*o.entropy_histogram);
    else entropy_histogram = o.entropy_histogram;
  }
}

double SoftmaxAccumulator::saturated_share() const {
  const int64_t n = normalized_entropy.count;
  return n ? static_cast<double>(saturated_rows) / static_cast<double>(n) : RunningMoments::nan();
}

double SoftmaxAccumulator::near_uniform_share() const {
  const int64_t n = normalized_entropy.count;
  return n ? static_cast<double>(near_uniform_rows) / static_cast<double>(n) : RunningMoments::nan();
}

}  // namespace scalelab::probes
