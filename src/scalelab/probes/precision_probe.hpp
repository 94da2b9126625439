// probes/precision_probe: where a forward pass would overflow in f16 or bf16 (claims E6, A9, B4).
//
// After a float forward (eval mode), each op's inputs are taken from the model's saved tensors and
// the op is replayed in the emulated format (kernels/precision.hpp), counting per op the results
// that overflow to ±inf, turn NaN, underflow to zero or fall subnormal:
//   embedding_scale   s · E[ids], with s and the table stored in the format
//   attention         every attention module: q·kᵀ, scaling (on q or on the logits, as the model
//                     does), softmax (with or without max subtraction), p·v (attention_emulated)
//   residual_add      x + f(x) of every sublayer
//   layernorm_*       every norm's input through the emulated norm (sums in f32 or the format)
// Inputs are the f32 values rounded to the format (counted as input_cast), so the counts describe
// the format's arithmetic on this model's actual activations, one op at a time.
#pragma once
#include <vector>

#include "scalelab/kernels/attention_emulated.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/probes/record.hpp"

namespace scalelab::probes {

struct PrecisionProbeOptions {
  DType dtype = DType::f16;
  DType accumulate = DType::f32;  // f32 or dtype
  bool subtract_max = true;       // softmax with max subtraction
  SoftmaxAlgorithm algorithm = SoftmaxAlgorithm::naive;
};

// One record per (stack, layer, site) with the op counts of that site: probe = "precision",
// values {<op>_results, <op>_overflow, <op>_nan, <op>_underflow, <op>_subnormal, <op>_max_abs}.
std::vector<ProbeRecord> probe_precision(Transformer<float>& model, const PrecisionProbeOptions& options,
                                         int64_t seed, int64_t step);

// Adds a record's counts to `totals` (per op), for the summary table.
void add_counts(const ProbeRecord& record, OverflowCounters& totals);

}  // namespace scalelab::probes
