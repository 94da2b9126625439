// nn/parameter: a trainable tensor, its gradient and its checkpoint name.
#pragma once
#include <string>
#include <vector>

#include "scalelab/core/tensor.hpp"

namespace scalelab {

template <class T>
struct Parameter {
  std::string name;  // e.g. "encoder.layers.0.self_attn.q.weight" (docs/checkpoint.md)
  Tensor<T> value;
  Tensor<T> grad;
  bool decay = true;  // weight decay applies (false for biases, norm gains, scalars)

  Parameter() = default;
  Parameter(std::string n, Shape shape, bool weight_decay = true)
      : name(std::move(n)), value(shape), grad(shape), decay(weight_decay) {
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
