// probes/values: the named numbers each accumulator contributes to a ProbeRecord, and the f16
// headroom. The names are the stable field names of docs/probes.md.
#pragma once
#include <map>
#include <string>

#include "scalelab/kernels/attention.hpp"
#include "scalelab/probes/moments.hpp"
#include "scalelab/probes/softmax_stats.hpp"

namespace scalelab::probes {

using Values = std::map<std::string, double>;

inline constexpr double kF16Max = 65504.0;  // largest finite IEEE binary16 value

// log2(65504 / max_abs): how many doublings the largest |value| can take before f16 overflows
// (negative: already over). +inf for max_abs = 0 (written as null).
double f16_headroom_bits(double max_abs);

// count, mean, var (population), rms, min, max, max_abs
Values moment_values(const RunningMoments& m);
// moment_values plus within_share (share inside [lo, hi]), lo, hi
Values range_values(const RangeMoments& r);
// rows, single_key_rows, and over the rows with n >= 2: entropy_norm_mean/_var/_min/_max,
// entropy_nats_mean, max_p_mean, max_p_max, saturated_share, near_uniform_share,
// jacobian_fro_mean/_max; saturated_threshold, near_uniform_threshold
Values softmax_values(const SoftmaxAccumulator& s);
// The attention kernel's online statistics of head h (h = -1: all heads): rows, entropy_norm_mean,
// entropy_nats_mean, max_p_mean, saturated_share (max p >= its threshold), near_uniform_share.
Values kernel_values(const AttentionProbeStats& k, int64_t h);
// max_abs, f16_headroom_bits, over_f16 (values with |x| > 65504), count, from a RangeMoments
// whose range is [-65504, 65504].
Values activation_values(const RangeMoments& r);

}  // namespace scalelab::probes
