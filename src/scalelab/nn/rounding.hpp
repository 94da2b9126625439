// nn/rounding: training in bf16 or f16, emulated at tensor boundaries.
//
// Mixed-precision training as fairseq, Marian and PyTorch AMP run it on hardware: the weights
// used by the forward, every layer's output and every gradient passed between layers are stored
// in the format, while products are accumulated in f32 inside each GEMM and reduction (as tensor
// cores and AMX do) and the optimizer updates f32 master weights. The engine emulates exactly the
// storage: each tensor below is rounded to the format (round-to-nearest-even, with subnormals
// and overflow to ±inf) where the layer produces it, and every rounding is counted per op in
// OverflowCounters (kernels/precision.hpp). The finer, per-operation emulation of attention and
// layer norm lives in the kernels (attention_emulated, layernorm_emulated) for the probes.
//
// Rounding points (docs/precision.md):
//   forward:  embedding output (embedding_scale), norm outputs (layernorm_normalize),
//             sublayer outputs and logits (gemm), residual sums (residual_add)
//   backward: the loss-scaled logit gradient (loss_scale), every gradient passed between layers
//             (activation_grad); parameter gradients are rounded by the trainer (weight_grad)
#pragma once
#include <cstdint>

#include "scalelab/kernels/precision.hpp"

namespace scalelab {

struct TensorRounding {
  DType dtype = DType::f32;
  OverflowCounters* counters = nullptr;  // where the roundings are counted (may be null)
};

// x[0:n] rounded to the format in place and counted under op; a no-op when r is null or f32.
template <class T>
void round_tensor(const TensorRounding* r, T* x, int64_t n, PrecisionOp op) {
  if (!r || r->dtype == DType::f32) return;
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<T>(round_counted(r->dtype, x[i], op, r->counters));
}

}  // namespace scalelab
