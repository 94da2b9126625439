// nn/stacked_linear: several Linear layers that read the same input, run as one GEMM each way
// (attention's q, k, v projections of one x; k, v of the encoder memory).
//
// With the layers' weights stacked, W = [W_1; ...; W_P]  [S, in] (S = Σ_p out_p), and biases
// b = [b_1, ..., b_P]  [S]:
//   forward   Y[rows, S] = x[rows, in] · Wᵀ + b          (layer p's output: columns o_p .. o_p + out_p)
//   backward  dW = dYᵀ x,  db = colsum(dY)               (rows o_p .. of each added to layer p's grads)
//             dx = dY · W   (or +=)                      (one product over K = S: the P products summed)
// One GEMM of width S in place of P of width out_p each way: for the small model's d = 64 that is
// three GEMMs of 64 columns (per-call overhead, narrow tiles) become one of 192.
//
// The layers keep their parameters (names, roles, initialisation, gradients); W and b are copied
// from them at every forward, the gradients added into them at every backward. The values are the
// layers' own run one by one, up to float summation order (dx sums over S in one product; dW, db
// are summed before they are added to the gradients). Float GEMMs in bf16: x and W are converted
// once per forward, dY once per backward (Bf16Copy), as Linear does.
#pragma once
#include <vector>

#include "scalelab/core/tensor.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/nn/linear.hpp"

namespace scalelab {

template <class T>
class StackedLinear {
 public:
  // layers: in order of their column blocks; all have x's in_features (checked), all or none a bias.
  // x: [rows, in] (kept by pointer until backward), y: [rows, S].
  void forward(const std::vector<Linear<T>*>& layers, const T* x, int64_t rows, T* y);
  // dy: [rows, S]. Adds dW, db to the layers' gradients; dx = dy W, or += with accumulate_dx.
  void backward(const T* dy, T* dx, bool accumulate_dx);

  int64_t width() const { return width_; }  // S, after a forward

 private:
  std::vector<Linear<T>*> layers_;
  int64_t in_ = 0, width_ = 0, rows_ = 0;
  bool has_bias_ = false;
  const T* saved_x_ = nullptr;
  Tensor<T> w_, b_;    // stacked [S, in], [S]
  Tensor<T> dw_, db_;  // backward scratch, [S, in], [S]
  Bf16Copy x_bf16_, w_bf16_;
};

}  // namespace scalelab
