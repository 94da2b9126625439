// nn/parameter: a trainable tensor, its gradient, its checkpoint name and its role.
#pragma once
#include <string>
#include <vector>

#include "scalelab/core/tensor.hpp"

namespace scalelab {

// What a parameter is for. The model chooses each initial value by role (model/transformer.cpp),
// the optimizer its weight decay and muP learning rate (train/optimizer.cpp); the name is only
// the checkpoint key, never parsed.
enum class ParamRole {
  weight,                 // a linear map W [out, in] (feed-forward, attention output)
  query_weight,           // attention W_q [d, d]
  key_weight,             // attention W_k [d, d]
  value_weight,           // attention W_v [d, d]
  readout_weight,         // untied output projection [vocab, d]
  bias,                   // a linear map's bias [out]
  embedding_table,        // token embedding E [vocab, d] (also the tied readout)
  embedding_scale,        // learned embedding multiplier s [1]
  norm_gain,              // LayerNorm / RMSNorm gain [d]
  norm_bias,              // LayerNorm bias [d]
  learned_positions,      // absolute position table P [max_len, d]
  relative_bias,          // T5 bucketed position bias [buckets, heads]
  attention_temperature,  // learned per-head logit scale [heads]
};

// A linear map's weight: W_q, W_k, W_v, the readout or any other [out, in] map.
inline bool is_linear_map(ParamRole r) {
  return r == ParamRole::weight || r == ParamRole::query_weight || r == ParamRole::key_weight ||
         r == ParamRole::value_weight || r == ParamRole::readout_weight;
}

// Weight decay applies to linear maps and the input tables; never to biases, norm gains or scalars.
inline bool takes_weight_decay(ParamRole r) {
  return is_linear_map(r) || r == ParamRole::embedding_table || r == ParamRole::learned_positions;
}

template <class T>
struct Parameter {
  std::string name;  // e.g. "encoder.layers.0.self_attn.q.weight" (docs/checkpoint.md)
  Tensor<T> value;
  Tensor<T> grad;
  ParamRole role = ParamRole::weight;

  Parameter() = default;
  Parameter(std::string n, Shape shape, ParamRole r = ParamRole::weight)
      : name(std::move(n)), value(shape), grad(shape), role(r) {
    value.zero();
    grad.zero();
  }
};

template <class T>
using ParameterRefs = std::vector<Parameter<T>*>;

// Appends every parameter of each module (each module exposes parameters()).
template <class T, class... Modules>
void collect_parameters(ParameterRefs<T>& out, Modules&... modules) {
  (..., [&] {
    for (Parameter<T>* p : modules.parameters()) out.push_back(p);
  }());
}

}  // namespace scalelab
