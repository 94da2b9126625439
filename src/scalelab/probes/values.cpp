#include "scalelab/probes/values.hpp"

#include <cmath>
#include <limits>

namespace scalelab::probes {

double f16_headroom_bits(double max_abs) {
  if (std::isnan(max_abs)) return max_abs;
  if (max_abs == 0.0) return std::numeric_limits<double>::infinity();
  return std::log2(kF16Max / max_abs);
}

Values moment_values(const RunningMoments& m) {
  const double var = m.variance();
  return {{"count", static_cast<double>(m.count)},
          {"mean", m.mean_or_nan()},
          {"var", var},
          {"rms", std::sqrt(var + m.mean * m.mean)},
          {"min", m.count ? m.min : RunningMoments::nan()},
          {"max", m.count ? m.max : RunningMoments::nan()},
          {"max_abs", m.max_abs()}};
}

Values range_values(const RangeMoments& r) {
  Values v = moment_values(r.moments);
  v["within_share"] = r.within_share();
  v["range_lo"] = r.lo;
  v["range_hi"] = r.hi;
  return v;
}

Values softmax_values(const SoftmaxAccumulator& s) {
  const RunningMoments& e = s.normalized_entropy;
  return {{"rows", static_cast<double>(s.rows)},
          {"single_key_rows", static_cast<double>(s.single_key_rows)},
          {"entropy_norm_mean", e.mean_or_nan()},
          {"entropy_norm_var", e.variance()},
          {"entropy_norm_min", e.count ? e.min : RunningMoments::nan()},
          {"entropy_norm_max", e.count ? e.max : RunningMoments::nan()},
          {"entropy_nats_mean", s.entropy.mean_or_nan()},
          {"max_p_mean", s.max_p.mean_or_nan()},
          {"max_p_max", s.max_p.count ? s.max_p.max : RunningMoments::nan()},
          {"saturated_share", s.saturated_share()},
          {"near_uniform_share", s.near_uniform_share()},
          {"jacobian_fro_mean", s.jacobian_fro.mean_or_nan()},
          {"jacobian_fro_max", s.jacobian_fro.count ? s.jacobian_fro.max : RunningMoments::nan()},
          {"saturated_threshold", s.thresholds.saturated},
          {"near_uniform_threshold", s.thresholds.near_uniform}};
}

Values kernel_values(const AttentionProbeStats& k, int64_t h) {
  const int64_t heads = static_cast<int64_t>(k.rows.size());
  const int64_t lo = h < 0 ? 0 : h, hi = h < 0 ? heads : h + 1;
  double H = 0, Hn = 0, mp = 0;
  int64_t rows = 0, nrows = 0, sat = 0, uni = 0;
  for (int64_t i = lo; i < hi && i < heads; ++i) {
    H += k.entropy_sum[i];
    Hn += k.normalized_entropy_sum[i];
    mp += k.max_prob_sum[i];
    rows += k.rows[i];
    nrows += k.normalized_rows[i];
    sat += k.saturated_rows[i];
    uni += k.uniform_rows[i];
  }
  const double nan = RunningMoments::nan();
  const double r = static_cast<double>(rows), nr = static_cast<double>(nrows);
  return {{"rows", r},
          {"entropy_norm_mean", nrows ? Hn / nr : nan},
          {"entropy_nats_mean", rows ? H / r : nan},
          {"max_p_mean", rows ? mp / r : nan},
          {"saturated_share", rows ? static_cast<double>(sat) / r : nan},
          {"near_uniform_share", nrows ? static_cast<double>(uni) / nr : nan},
          {"saturated_threshold", k.saturation_threshold},
          {"near_uniform_threshold", k.uniform_threshold}};
}

Values activation_values(const RangeMoments& r) {
  const double max_abs = r.moments.max_abs();
  return {{"count", static_cast<double>(r.moments.count)},
          {"max_abs", max_abs},
          {"f16_headroom_bits", f16_headroom_bits(max_abs)},
          {"over_f16", static_cast<double>(r.moments.count - r.within)}};
}

}  // namespace scalelab::probes
