// nn/norm: LayerNorm over d_model with a learned gain (weight) and bias.
#pragma once
#include "scalelab/kernels/layernorm.hpp"
#include "scalelab/nn/parameter.hpp"

namespace scalelab {

template <class T>
class LayerNorm {
 public:
  LayerNorm() = default;
  LayerNorm(const std::string& name, int64_t dim, double eps = 1e-5);

  // x: [rows, dim] kept by pointer until backward; y: [rows, dim].
  void forward(const T* x, int64_t rows, T* y);
  // dx = LN'(x)ᵀ dy (or += when accumulate_dx); accumulates the gain and bias gradients.
  void backward(const T* dy, T* dx, bool accumulate_dx = false);

  ParameterRefs<T> parameters() { return {&weight_, &bias_}; }

 private:
  int64_t dim_ = 0;
  double eps_ = 1e-5;
  Parameter<T> weight_, bias_;
  const T* saved_x_ = nullptr;
  Tensor<T> mean_, rstd_, scratch_;
  int64_t saved_rows_ = 0;
};

}  // namespace scalelab
