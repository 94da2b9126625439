// nn/norm: LayerNorm (gain and bias) or RMSNorm (gain only) over the last axis.
//   layer: y = (x - mean) / sqrt(var + eps) · g + b      rms: y = x / sqrt(mean(x²) + eps) · g
// With learned = false the gain is fixed at 1 and there is no bias (e.g. a parameter-free
// QK-norm); no parameter is then exposed.
#pragma once
#include "scalelab/kernels/layernorm.hpp"
#include "scalelab/nn/parameter.hpp"

namespace scalelab {

enum class NormKind { layer, rms };

template <class T>
class Norm {
 public:
  Norm() = default;
  Norm(const std::string& name, int64_t dim, NormKind kind, double eps, bool learned = true);

  // x: [rows, dim] kept by pointer until backward; y: [rows, dim].
  void forward(const T* x, int64_t rows, T* y);
  // dx = N'(x)ᵀ dy (or += when accumulate_dx); accumulates the gain (and bias) gradients.
  void backward(const T* dy, T* dx, bool accumulate_dx = false);
  // dx = residual + N'(x)ᵀ dy in one pass after the norm's (a residual stage's input gradient);
  // residual may be dx itself (then as backward with accumulate_dx).
  void backward_add(const T* dy, const T* residual, T* dx);

  ParameterRefs<T> parameters();
  NormKind kind() const { return kind_; }

 private:
  int64_t dim_ = 0;
  NormKind kind_ = NormKind::layer;
  double eps_ = 1e-5;
  bool learned_ = true;
  Parameter<T> weight_, bias_;
  const T* saved_x_ = nullptr;
  Tensor<T> mean_, rstd_, scratch_;
  int64_t saved_rows_ = 0;

  void backward_into(const T* dy, T* dx);  // dx = N'(x)ᵀ dy, the parameter gradients accumulated
};

}  // namespace scalelab
