// nn/attention: multi-head attention with its four projections and every logit knob.
//
//   q = x_q Wqᵀ + bq,  k = x_kv Wkᵀ + bk,  v = x_kv Wvᵀ + bv      [rows, d], heads of d_k
//   q, k = QKNorm(q), QKNorm(k)           per head, over d_k            (optional)
//   q, k = RoPE(q), RoPE(k)                                              (optional)
//   q = c · q                              when the scale is applied to the query (then c' = 1)
//   ctx = attention(q, k, v; c', softcap, ALiBi, bias, masks)           (kernels/attention.hpp)
//   y = ctx Woᵀ + bo
// Self-attention passes the same x as x_q and x_kv and sums the two input gradients.
#pragma once
#include "scalelab/nn/linear.hpp"
#include "scalelab/nn/norm.hpp"
#include "scalelab/nn/options.hpp"

namespace scalelab {

// The per-call geometry and masks.
struct AttentionCall {
  int64_t batch = 0, q_len = 0, k_len = 0;
  bool causal = false;
  const int32_t* key_lengths = nullptr;  // [batch] or null
  const void* bias = nullptr;            // const T* [heads, q_len, k_len] additive, or null
  void* dbias = nullptr;                 // T* accumulates the bias gradient (+=), or null
};

template <class T>
class MultiHeadAttention {
 public:
  MultiHeadAttention() = default;
  MultiHeadAttention(const std::string& name, const LayerOptions& options, bool self_attention);

  // x_q: [batch*q_len, d], x_kv: [batch*k_len, d] (both kept by pointer), y: [batch*q_len, d].
  void forward(const AttentionCall& call, const T* x_q, const T* x_kv, T* y);
  // dy: [batch*q_len, d]. dx_q and dx_kv are accumulated into (+=); they may alias (self-attention).
  void backward(const T* dy, T* dx_q, T* dx_kv);

  ParameterRefs<T> parameters();
  Linear<T>& q_proj() { return q_; }
  Linear<T>& k_proj() { return k_; }
  Linear<T>& v_proj() { return v_; }
  Linear<T>& out_proj() { return o_; }
  Parameter<T>* temperature() { return knobs_.learned_temperature ? &temperature_ : nullptr; }

  // Read-only views for the probes (valid after a forward).
  const Tensor<T>& kernel_q() const { return q_in_ ? *q_in_ : qraw_; }  // q as the kernel sees it
  const Tensor<T>& kernel_k() const { return k_in_ ? *k_in_ : kraw_; }
  const Tensor<T>& kernel_v() const { return vbuf_; }
  AttentionShape last_shape() const { return shape(call_); }
  AttentionOptions<T> last_options() const { return kernel_options(call_); }
  const Tensor<T>& probabilities() const { return saved_.probs; }  // naive kernel only
  // The next forwards fill *sink with the kernel's attention statistics (null: off, no cost).
  void set_probe_stats(AttentionProbeStats* sink) { probe_sink_ = sink; }
  // The scale the kernel applies per head (after a query pre-scale this is 1).
  double kernel_scale() const;
  // The factor q was multiplied by before the kernel (1 unless attention.apply_to = "query").
  double query_scale() const { return knobs_.scale_query ? knobs_.scale.resolve(opt_.head_dim()) : 1.0; }

 private:
  AttentionShape shape(const AttentionCall& call) const;
  AttentionOptions<T> kernel_options(const AttentionCall& call) const;
  bool transforms_qk() const;

  LayerOptions opt_;
  AttentionKnobs knobs_;
  Linear<T> q_, k_, v_, o_;
  Norm<T> q_norm_, k_norm_;
  Parameter<T> temperature_;   // [heads]
  Tensor<T> alibi_slopes_;     // [heads]
  AttentionCall call_;
  Tensor<T> qraw_, kraw_, vbuf_, ctx_;  // projections and the context, saved by the forward
  Tensor<T> qk_q_, qk_k_;               // q, k after the norm / RoPE / pre-scale
  const Tensor<T>* q_in_ = nullptr;
  const Tensor<T>* k_in_ = nullptr;
  Tensor<T> dq_, dk_, dv_, dctx_, dqn_, dkn_;  // backward scratch
  AttentionSaved<T> saved_;
  AttentionProbeStats* probe_sink_ = nullptr;
};

// ALiBi slopes for n heads (Press et al. 2022): 2^(-8i/n) for i = 1..n when n is a power of two,
// otherwise those of the next lower power of two followed by every other one of twice as many.
std::vector<double> alibi_slopes(int64_t heads);

}  // namespace scalelab
