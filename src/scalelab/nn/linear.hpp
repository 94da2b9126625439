// nn/linear: y = x Wᵀ + b, with W stored [out, in] (PyTorch's layout, so checkpoints compare
// directly).
#pragma once
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/nn/parameter.hpp"

namespace scalelab {

template <class T>
class Linear {
 public:
  Linear() = default;
  Linear(const std::string& name, int64_t in_features, int64_t out_features, bool bias = true,
         ParamRole weight_role = ParamRole::weight);

  // x: [rows, in] (kept by pointer until backward), y: [rows, out].
  void forward(const T* x, int64_t rows, T* y);
  // y = relu(x Wᵀ + b): the bias and the ReLU fused into the GEMM (kernels/gemm.hpp,
  // gemm_bias_act; forward fuses the bias the same way). The caller keeps y for the ReLU's backward.
  void forward_relu(const T* x, int64_t rows, T* y);
  // dW += dyᵀ x, db += colsum(dy); dx = dy W (or += when accumulate_dx). dx may be null.
  // With dx_keep_where_positive = a [rows, in] (not with accumulate_dx): dx = (dy W) · [a > 0],
  // the backward of a ReLU whose output a fed this layer, fused with the GEMM (gemm_bias_act).
  void backward(const T* dy, T* dx, bool accumulate_dx = false,
                const T* dx_keep_where_positive = nullptr);

  ParameterRefs<T> parameters();
  Parameter<T>& weight() { return weight_; }
  Parameter<T>& bias() { return bias_; }
  bool has_bias() const { return has_bias_; }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

 private:
  int64_t in_ = 0, out_ = 0;
  bool has_bias_ = true;
  Parameter<T> weight_, bias_;
  const T* saved_x_ = nullptr;
  int64_t saved_rows_ = 0;
  // x's and W's bf16 copies from the last forward, for backward (float GEMMs in bf16 only).
  Bf16Copy x_bf16_, w_bf16_;

  void forward_gemm(const T* x, int64_t rows, T* y, bool relu);
};

}  // namespace scalelab
