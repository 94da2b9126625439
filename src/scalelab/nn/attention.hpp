// nn/attention: multi-head attention with its four projections.
//
//   q = x_q Wqᵀ + bq,  k = x_kv Wkᵀ + bk,  v = x_kv Wvᵀ + bv        [rows, d_model] each
//   ctx = attention(q, k, v) per head (kernels/attention.hpp)       [rows_q, d_model]
//   y = ctx Woᵀ + bo
// Self-attention passes the same x as x_q and x_kv and sums the two input gradients.
#pragma once
#include "scalelab/kernels/attention.hpp"
#include "scalelab/nn/linear.hpp"
#include "scalelab/nn/options.hpp"

namespace scalelab {

// The per-call geometry and masks.
struct AttentionCall {
  int64_t batch = 0, q_len = 0, k_len = 0;
  bool causal = false;
  const int32_t* key_lengths = nullptr;  // [batch] or null
};

template <class T>
class MultiHeadAttention {
 public:
  MultiHeadAttention() = default;
  MultiHeadAttention(const std::string& name, const LayerOptions& options);

  // x_q: [batch*q_len, d], x_kv: [batch*k_len, d] (both kept by pointer), y: [batch*q_len, d].
  void forward(const AttentionCall& call, const T* x_q, const T* x_kv, T* y);
  // dy: [batch*q_len, d]. dx_q and dx_kv are accumulated into (+=); they may alias (self-attention).
  void backward(const T* dy, T* dx_q, T* dx_kv);

  ParameterRefs<T> parameters();
  Linear<T>& q_proj() { return q_; }
  Linear<T>& k_proj() { return k_; }
  Linear<T>& v_proj() { return v_; }
  Linear<T>& out_proj() { return o_; }
  // Probabilities of the last forward, [batch, heads, q_len, k_len] (for the probes).
  const Tensor<T>& probabilities() const { return saved_.probs; }

 private:
  AttentionShape shape(const AttentionCall& call) const;
  AttentionOptions<T> kernel_options(const AttentionCall& call) const;

  LayerOptions opt_;
  Linear<T> q_, k_, v_, o_;
  AttentionCall call_;
  Tensor<T> qbuf_, kbuf_, vbuf_, ctx_;          // saved by the forward
  Tensor<T> dq_, dk_, dv_, dctx_;               // backward scratch
  AttentionSaved<T> saved_;
};

}  // namespace scalelab
