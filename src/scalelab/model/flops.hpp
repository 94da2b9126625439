// model/flops: the floating-point operations of one training step, counted on paper, so that a
// measured step time becomes a fraction of the machine's FMA peak (docs/performance.md).
//
// What is counted (a multiply-add is 2 flops; only the matrix products, the convention of the
// PaLM/Chinchilla "model FLOPs" and of FlashAttention-2):
//   a linear map [rows, in] -> [rows, out]       forward 2·rows·in·out, backward 2× that (dX, dW)
//   attention per (batch, head), q_len × k_len   forward 4·q_len·k_len·d_k (QKᵀ and PV),
//                                                backward 10·q_len·k_len·d_k (recomputed S, dV, dP, dQ, dK)
//   a causal self-attention counts half of its q_len·k_len (the masked half is skipped by the
//   flash kernel, so it is not work done).
// Not counted: embeddings (lookups), norms, activations, softmax exponentials, the loss, the
// optimizer (O(params) each, well under 1 % of the matrix work at the configurations measured).
// Padding tokens are counted: they are computed.
#pragma once
#include <cstdint>

#include "scalelab/model/config.hpp"

namespace scalelab {

struct StepShape {
  int64_t batch = 0;
  int64_t src_len = 0;  // encoder tokens per example (0 for decoder-only)
  int64_t tgt_len = 0;  // decoder tokens per example
};

struct StepFlops {
  double linear_forward = 0;     // every linear map, the output projection included
  double attention_forward = 0;  // QKᵀ and PV
  double forward() const { return linear_forward + attention_forward; }
  // forward + backward: linear maps 3× their forward, attention (4 + 10) / 4 = 3.5×.
  double training() const { return 3.0 * linear_forward + 3.5 * attention_forward; }
};

// Throws Error if the shape does not fit the architecture (e.g. src_len > 0 for decoder-only).
StepFlops step_flops(const ModelConfig& config, const StepShape& shape);

}  // namespace scalelab
