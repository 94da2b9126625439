// nn/feed_forward: y = act(x W1ᵀ + b1) W2ᵀ + b2, position-wise.
#pragma once
#include "scalelab/nn/linear.hpp"
#include "scalelab/nn/options.hpp"

namespace scalelab {

template <class T>
class FeedForward {
 public:
  FeedForward() = default;
  FeedForward(const std::string& name, const LayerOptions& options);

  // x: [rows, d] kept by pointer; y: [rows, d].
  void forward(const T* x, int64_t rows, T* y);
  // dx += FF'(x)ᵀ dy.
  void backward(const T* dy, T* dx);

  ParameterRefs<T> parameters();

 private:
  Activation act_ = Activation::relu;
  Linear<T> fc1_, fc2_;
  Tensor<T> pre_act_, post_act_, dpost_, dpre_;
  // With the ReLU, where the GEMMs run in bf16: a's and da's bf16 copies, written by the GEMMs that
  // write a (fc1's forward) and da (fc2's dx), read by the GEMMs of fc2's forward and fc1's backward.
  // Where they run oneDNN's bf16 matmul (float layers; Bf16Copy keeps copies) a and da exist only
  // as these bits (hidden_in_bf16_): every reader of a and da reads the bits, and the GEMMs write
  // half the bytes (Linear::forward_relu_to_bf16, backward_to_bf16).
  Bf16Copy post_act_bf16_, dpost_bf16_;
  bool hidden_in_bf16_ = false;  // set by forward, for its backward
  int64_t rows_ = 0;
};

}  // namespace scalelab
