// kernels/attention_emulated: attention forward in an emulated number format (precision.hpp), with
// the orders the seeds argue about selectable and every op's overflows counted (claims A9, A10).
//
// For query i (inputs first stored in the format, counted as input_cast):
//   scale_order = logits_after:  s_ij = round(round(q_i·k_j) · scale)      (qk_matmul, logit_scale)
//   scale_order = q_before:      s_ij = round(round(q_i · scale)·k_j)      (q_scale, qk_matmul)
//   subtract_max:   e_ij = round(e^round(s_ij - max_j s_ij))   (softmax_max_sub, softmax_exp)
//   otherwise:      e_ij = round(e^s_ij)                       (softmax_exp; overflows for s > 11.09)
//   l_i = sum_j e_ij (softmax_sum),  p_ij = round(e_ij / l_i) (softmax_div),  o_i = p_i·v (pv_matmul)
// Dot products and sums accumulate in f32 or in the format (precision.hpp, emulated_dot).
//
// algorithm = flash: the same with the online softmax of attention_flash.hpp, tile by tile, in the
// format: m' = max(m, tile max), alpha = round(e^round(m - m')), l = round(alpha·l) + sum of the
// tile's e, acc = round(alpha·acc) + e·v, o = round(acc / l). Without subtract_max, m stays 0.
// Masks (causal, key_lengths) as in attention.hpp; a row with no visible key gives o = 0.
#pragma once
#include <cstdint>

#include "scalelab/kernels/attention.hpp"
#include "scalelab/kernels/precision.hpp"

namespace scalelab {

enum class ScaleOrder { logits_after, q_before };
enum class SoftmaxAlgorithm { naive, flash };

struct EmulatedAttentionOptions {
  DType dtype = DType::f16;
  DType accumulate = DType::f32;  // f32 or dtype
  ScaleOrder scale_order = ScaleOrder::logits_after;
  bool subtract_max = true;
  SoftmaxAlgorithm algorithm = SoftmaxAlgorithm::naive;
  int64_t tile = 64;  // keys per tile of the flash algorithm
  double scale = 1.0;
  bool causal = false;
  const int32_t* key_lengths = nullptr;  // [batch]
};

// q, k, v, out in the layouts of attention.hpp (float holding format values); counters += per op.
void attention_emulated_forward(const AttentionShape& shape, const EmulatedAttentionOptions& opt,
                                const float* q, const float* k, const float* v, float* out,
                                OverflowCounters& counters);

}  // namespace scalelab
